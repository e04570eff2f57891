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
    /// Capacities; nil with ``curveWithin``: powers of two up to each
    /// trace's working set (``CapacityCurve/doublingSizes(for:points:)``).
    public var sizes: [Int]?
    /// Policies, in column order.
    public var policies: [PolicyKind]
    /// Seed for generated workloads and for the memory level's key hashes.
    public var seed: UInt64
    /// How trace files are read.
    public var format: TraceFormat
    /// How results are printed.
    public var output: Output
    /// With `--curve`: the recommended capacity is the smallest within this
    /// many points of the best ratio tried (``CapacityCurve``).
    public var curveWithin: Double?

    /// The capacities when `--sizes` is not given and there is no curve.
    public static let defaultSizes = [1000]

    /// A run from option text: `sizes` and `policies` are comma-separated
    /// lists (`sizes` nil: 1000, or with a curve powers of two up to each
    /// trace's working set), `format` a ``TraceFormat`` name, `curveWithin`
    /// (`--curve --within`) the points of the recommendation's rule.
    public init(inputs: [String], sizes: String?, policies: String, seed: UInt64, format: String, output: Output,
                curveWithin: Double? = nil) throws {
        guard !inputs.isEmpty else {
            throw UsageError(description: "sim needs at least one trace file or workload (see strata sim --help)")
        }
        if let curveWithin, !(curveWithin >= 0 && curveWithin <= 100) {
            throw UsageError(description: "--within: \(String(format: "%g", curveWithin)) is not a number of points from 0 to 100")
        }
        self.inputs = inputs
        self.curveWithin = curveWithin
        self.sizes = try sizes.map(Self.parseSizes) ?? (curveWithin == nil ? Self.defaultSizes : nil)
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
        let simulators = traces.map { trace in
            // A curve replays its sizes smallest first.
            let sizes = sizes.map { curveWithin == nil ? $0 : $0.sorted() } ?? CapacityCurve.doublingSizes(for: trace)
            return Simulator(policies: policies, sizes: sizes, seed: seed)
        }
        let bar = progress?(zip(simulators, traces).reduce(0) { $0 + $1.0.work(for: $1.1) })
        var results: [SimulationResult] = []
        var finished = 0
        for (simulator, trace) in zip(simulators, traces) {
            results += simulator.run(trace) { done, label in
                bar?.update(done: finished + done, label: "\(trace.name) \(label)")
            }
            finished += simulator.work(for: trace)
        }
        bar?.finish()
        let report = SimReport(results: results)
        switch output {
        case .table: return curveWithin.map(report.curveTable(within:)) ?? report.table()
        case .json: return report.json(curveWithin: curveWithin)
        case .csv: return report.csv()
        }
    }
}
