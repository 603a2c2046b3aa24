"""The course's instructor tools: release student notebooks, and grade submissions."""
