"""Allow `python -m affine_lsp`."""

from affine_lsp.cli import main

raise SystemExit(main())
