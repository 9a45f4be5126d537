"""fetcher service: downloads a web page politely (robots.txt, size and time limits)."""
