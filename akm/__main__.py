"""`python -m akm` runs the command line."""

from akm.cli import main

raise SystemExit(main())
