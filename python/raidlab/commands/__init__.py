"""CLI commands beyond `layout`, one module each; `raidlab.cli` registers them."""
