# The two quick-start commands: `make run` and `make test`.
SWIFT ?= swift

.PHONY: setup build test bench clean

setup:
	@bash scripts/setup.sh

build: setup
	$(SWIFT) build

test: setup
	$(SWIFT) build --build-tests
	$(SWIFT) test

bench:
	$(SWIFT) run -c release strata-bench

clean:
	rm -rf .build
