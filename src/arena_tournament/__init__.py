"""Tournaments: schedules as data, resumable runners, ratings with intervals, reports."""
