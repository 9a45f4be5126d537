"""The agenda: what the person's sources say is coming up, and what happened, each line quoted and cited."""
