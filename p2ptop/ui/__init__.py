"""The Textual dashboard (the only package that imports textual). Entry point: app.run_dashboard(args)."""
