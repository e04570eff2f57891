// strata-bench: measures Strata against baselines measured in the same run.
// Usage: swift run -c release strata-bench [--quick] [--json FILE]
import Foundation
import Strata

var arguments = CommandLine.arguments.dropFirst()
var options = BenchOptions()
while let argument = arguments.popFirst() {
    switch argument {
    case "--quick": options.runs = 3; options.opsPerRun = 400_000
    case "--json": options.jsonPath = arguments.popFirst()
    case "--only": options.only = arguments.popFirst()
    case "-h", "--help":
        print("""
        strata-bench: Strata next to same-run baselines.
          --quick       fewer, shorter runs
          --json FILE   also write the results as JSON (default bench-results.json)
          --only NAME   run scenarios whose name contains NAME
        """)
        exit(0)
    default:
        FileHandle.standardError.write(Data("strata-bench: unknown argument \(argument)\n".utf8))
        exit(2)
    }
}

let report = Report(options: options)
await TargetScenarios(options: options, report: report).run()
await MemoryScenarios(options: options, report: report).run()
MemoryPolicyScenario(options: options, report: report).run()
await InspectorScenario(options: options, report: report).run()
ComposeScenario(options: options, report: report).run()
await FailSafeScenario(options: options, report: report).run()
await PoolScenario(report: report, options: options).run()
try await DiskScenario(report: report, options: options).run()
try await RedisScenario(report: report, options: options).run()
try await RedisClusterScenario(scenario: RedisScenario(report: report, options: options)).run()
try await NetworkScenario(report: report, options: options).run()
report.finish()
