"""Text-generation service."""
