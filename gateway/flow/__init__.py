"""The message path: intake of an inbound, the job's turn, delivery, live messages, commands and answers."""
