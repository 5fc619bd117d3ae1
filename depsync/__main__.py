from depsync.entry import main

raise SystemExit(main())
