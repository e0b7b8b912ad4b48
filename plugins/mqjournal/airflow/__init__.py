"""Thin Airflow adapters: hooks own connections and secrets; operators and DAGs stay declarative."""
