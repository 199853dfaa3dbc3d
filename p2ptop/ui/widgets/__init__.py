"""The dashboard's widgets: header, fabric view, pair matrix, pair panel, events log."""
