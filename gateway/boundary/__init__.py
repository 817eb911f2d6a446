"""The adapter boundary: the port adapters call, the message types both sides share, handing items out."""
