from babysit.cli import main

main()
