"""The Kafka backbone: topics, the stage contract, the error policy and the faust runner."""
