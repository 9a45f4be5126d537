"""Backup and restore of a whole instance: the archive format, sealing, the consistent picture, restoring."""
