import os
import sys


class Widget:
    def __init__(self, name, width=100, height=50, visible=True):
        self.name = name
        self.width = width
        self.height = height
        self.visible = visible

    def area(self):
        return self.width * self.height

    def resize(self, width, height):
        self.width = width
        self.height = height
        self.redraw(full=True, delay=0)

    def redraw(self, full=False, delay=10):
        if not self.visible:
            return
        paint(self.name, self.width, self.height, full=full)


class Button(Widget):
    def __init__(self, name, label, on_click=None):
        super().__init__(name, width=80, height=24)
        self.label = label
        self.on_click = on_click

    def click(self):
        if self.on_click is not None:
            self.on_click(self)
        return self.label


def paint(name, width, height, full=False):
    mode = "full" if full else "partial"
    print(f"paint {name} {width}x{height} ({mode})")


def load_theme(path):
    if not os.path.exists(path):
        return {"bg": "white", "fg": "black"}
    with open(path, encoding="utf-8") as handle:
        return parse_theme(handle.read())


def parse_theme(text):
    theme = {}
    for line in text.splitlines():
        key, value = line.split("=", 1)
        theme[key.strip()] = value.strip()
    return theme


def main(argv):
    theme = load_theme(argv[1] if len(argv) > 1 else "theme.ini")
    button = Button("ok", "OK", on_click=lambda b: print("clicked"))
    button.resize(120, 30)
    return 0 if theme else 1


if __name__ == "__main__":
    sys.exit(main(sys.argv))
