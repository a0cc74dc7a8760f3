"""The workspace on disk: file-watcher registrations, LSP globs and the file watcher."""
