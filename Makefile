# The two quick-start commands: `make run` and `make test`.
SWIFT ?= swift

.PHONY: setup build run test bench clean

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

bench: setup
	$(SWIFT) run -c release strata-bench

clean:
	rm -rf .build
