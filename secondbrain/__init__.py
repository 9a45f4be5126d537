"""secondbrain: a personal memory engine built as a Kafka pipeline of small stages."""

__version__ = "0.1.0"
