"""The command line: one thin module per command (parse, call the core, render)."""
