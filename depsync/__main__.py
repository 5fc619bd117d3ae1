from depsync.cli import main

raise SystemExit(main())
