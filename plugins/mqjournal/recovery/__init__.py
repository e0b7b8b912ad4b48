"""The recovery side: restore plans from the backup catalog, repair plans for receiver naming, backup expiry."""
