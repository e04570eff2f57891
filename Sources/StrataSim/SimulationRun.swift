import Foundation

/// One `strata sim` invocation: what to replay, at which sizes, with which
/// policies, and how to print it. The command line only parses its options
/// into this.
public struct SimulationRun: Sendable {
    /// How results are printed.
    public enum Output: Sendable {
        case table, json, csv
    }

    /// A bad option value; its description is one line naming the option.
    public struct UsageError: Error, Equatable, CustomStringConvertible {
        public let description: String
    }

    /// Trace files and workload specs, in report order.
    public var inputs: [String]
    /// Capacities.
    public var sizes: [Int]
    /// Policies, in column order.
    public var policies: [PolicyKind]
    /// Seed for generated workloads.
    public var seed: UInt64
    /// How trace files are read.
    public var format: TraceFormat
    /// How results are printed.
    public var output: Output

    /// A run from option text: `sizes` and `policies` are comma-separated
    /// lists, `format` a ``TraceFormat`` name.
    public init(inputs: [String], sizes: String, policies: String, seed: UInt64, format: String, output: Output) throws {
        guard !inputs.isEmpty else {
            throw UsageError(description: "sim needs at least one trace file or workload (see strata sim --help)")
        }
        self.inputs = inputs
        self.sizes = try Self.parseSizes(sizes)
        do { self.policies = try PolicyKind.parse(policies) } catch {
            throw UsageError(description: "--policies: \(error)")
        }
        guard let traceFormat = TraceFormat(rawValue: format) else {
            let known = TraceFormat.allCases.map(\.rawValue).joined(separator: ", ")
            throw UsageError(description: "--format: unknown format \"\(format)\" (known: \(known))")
        }
        self.format = traceFormat
        self.seed = seed
        self.output = output
    }

    /// `500,1000,2000` → `[500, 1000, 2000]` (positive integers up to
    /// ``Trace/maxSize``, `_` allowed). A capacity near `Int.max` would
    /// overflow the policies' byte counts, so it is refused here.
    public static func parseSizes(_ list: String) throws -> [Int] {
        try list.split(separator: ",", omittingEmptySubsequences: false).map { part in
            let text = part.trimmingCharacters(in: .whitespaces).replacingOccurrences(of: "_", with: "")
            let digitsOnly = !text.isEmpty && text.allSatisfy { $0.isASCII && $0.isWholeNumber }
            guard let value = Int(text), value >= 1 else {
                if digitsOnly, Int(text) == nil {  // too many digits for Int
                    throw UsageError(description: "--sizes: \(text) is over the maximum of \(Trace.maxSize) (2^50)")
                }
                throw UsageError(description:
                    "--sizes: \"\(part)\" is not a positive integer (expected a list such as 500,1000,2000)")
            }
            guard value <= Trace.maxSize else {
                throw UsageError(description: "--sizes: \(text) is over the maximum of \(Trace.maxSize) (2^50)")
            }
            return value
        }
    }

    /// Reads every file and generates every workload, before any replay, so a
    /// bad input fails at once. Errors are ``TraceError`` or ``Workload/SpecError``.
    public func loadTraces() throws -> [Trace] {
        let reader = TraceReader(format: format)
        return try inputs.map { input in
            Workload.looksLikeSpec(input)
                ? try Workload(spec: input).trace(seed: seed, name: input)
                : try reader.read(path: input)
        }
    }

    /// Replays `traces` and renders the report; `progress` (if any) sees the
    /// whole run's work.
    public func run(_ traces: [Trace], progress: ((_ total: Int) -> ProgressBar)? = nil) -> String {
        let simulator = Simulator(policies: policies, sizes: sizes)
        let bar = progress?(traces.reduce(0) { $0 + simulator.work(for: $1) })
        var results: [SimulationResult] = []
        var finished = 0
        for trace in traces {
            results += simulator.run(trace) { done, label in
                bar?.update(done: finished + done, label: "\(trace.name) \(label)")
            }
            finished += simulator.work(for: trace)
        }
        bar?.finish()
        let report = SimReport(results: results)
        switch output {
        case .table: return report.table()
        case .json: return report.json()
        case .csv: return report.csv()
        }
    }
}
