"""Legacy log summarizer, indented with tabs and saved with CRLF line endings.

Test data for lspmux's Locate engine: tabs widen nothing in LSP columns, and "\r\n" is one
line break.
"""

import re
import sys
from collections import Counter, defaultdict

LINE = re.compile(r"^(?P<level>[A-Z]+)\s+(?P<source>[\w.]+):\s+(?P<message>.*)$")
LEVELS = ("DEBUG", "INFO", "WARNING", "ERROR")


class Entry:
	__slots__ = ("level", "source", "message")

	def __init__(self, level, source, message):
		self.level = level
		self.source = source
		self.message = message

	def __repr__(self):
		return "Entry(%r, %r, %r)" % (self.level, self.source, self.message)

	@property
	def severity(self):
		try:
			return LEVELS.index(self.level)
		except ValueError:
			return len(LEVELS)


class Parser:
	def __init__(self, strict=False):
		self.strict = strict
		self.skipped = 0

	def parse_line(self, line):
		match = LINE.match(line.rstrip("\r\n"))
		if match is None:
			if self.strict:
				raise ValueError("bad line: %r" % line)
			self.skipped += 1
			return None
		return Entry(match.group("level"), match.group("source"), match.group("message"))

	def parse(self, lines):
		for line in lines:
			entry = self.parse_line(line)
			if entry is not None:
				yield entry


class Summary:
	def __init__(self):
		self.by_level = Counter()
		self.by_source = defaultdict(Counter)
		self.worst = None

	def add(self, entry):
		self.by_level[entry.level] += 1
		self.by_source[entry.source][entry.level] += 1
		if self.worst is None or entry.severity > self.worst.severity:
			self.worst = entry

	def add_all(self, entries):
		for entry in entries:
			self.add(entry)
		return self

	def noisy_sources(self, limit=3):
		totals = Counter({source: sum(c.values()) for source, c in self.by_source.items()})
		return [source for source, _ in totals.most_common(limit)]

	def render(self, out):
		for level in LEVELS:
			out.write("%-8s %5d\n" % (level, self.by_level[level]))
		if self.worst is not None:
			out.write("worst: %s\n" % (self.worst,))
		for source in self.noisy_sources():
			counts = self.by_source[source]
			out.write("\t%s\t%s\n" % (source, dict(counts)))


def summarize(lines, strict=False):
	parser = Parser(strict=strict)
	summary = Summary().add_all(parser.parse(lines))
	return summary, parser.skipped


def main(argv):
	strict = "--strict" in argv
	paths = [arg for arg in argv if not arg.startswith("--")]
	for path in paths:
		with open(path, encoding="utf-8") as handle:
			summary, skipped = summarize(handle, strict=strict)
		summary.render(sys.stdout)
		if skipped:
			sys.stdout.write("(%d lines skipped)\n" % skipped)
	return 0


if __name__ == "__main__":
	sys.exit(main(sys.argv[1:]))
