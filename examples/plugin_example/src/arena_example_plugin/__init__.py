"""An example third-party Arena plugin."""
