from acms.cli.main import main

main()
