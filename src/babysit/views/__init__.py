"""views: render what the store holds (status, logbook) for people and programs."""
