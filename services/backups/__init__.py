"""Backups of the whole instance while it runs: the backup folder, the schedule and the admin routes."""
