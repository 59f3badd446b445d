"""Code shared by the experiment scripts of scripts/ (imported as `lib.<module>`:
a script run as /usr/bin/python3 scripts/<name>.py has scripts/ on its path)."""
