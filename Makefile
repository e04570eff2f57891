# The two quick-start commands: `make run` and `make test`.
SWIFT ?= swift

.PHONY: setup build run test callgrind-guard bench docs clean

# Extra arguments for the explorer: make run ARGS="--config Examples/pipeline.yaml"
ARGS ?=

setup:
	@bash scripts/setup.sh

build: setup
	$(SWIFT) build

run: setup
	$(SWIFT) build --product strata
	$$($(SWIFT) build --show-bin-path)/strata $(ARGS)

test: setup
	$(SWIFT) build --build-tests
	SWIFT=$(SWIFT) bash scripts/test.sh
	@bash scripts/callgrind-guard.sh
	@SWIFT=$(SWIFT) bash scripts/docs.sh

# Instructions per get-hit under valgrind, against Tests/callgrind-budgets.txt.
callgrind-guard: setup
	@bash scripts/callgrind-guard.sh

# DocC documentation of Strata and StrataRedis into .build/docs (scripts/docs.sh).
docs: setup
	@SWIFT=$(SWIFT) bash scripts/docs.sh

# The figures and their same-run baselines, as a table and as JSON, in files
# named for the day (bench-results-YYYY-MM-DD.txt and .json).
bench: setup
	@day=$$(date +%F); $(SWIFT) run -c release strata-bench --json bench-results-$$day.json $(ARGS) | tee bench-results-$$day.txt

clean:
	rm -rf .build
