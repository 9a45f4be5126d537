"""Development tools: stand-ins for infrastructure that is not installed on a developer machine."""
