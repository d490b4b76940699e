"""The competition site behind `arena serve`: leaderboard, bot pages, matches, the replay viewer, live
matches, the JSON API and the management API (app.py), and the static export (export.py)."""
