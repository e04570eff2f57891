import ArgumentParser
import Foundation
import Logging
import Strata
import StrataExplorer
import StrataSim
import Synchronization

/// `strata`: the interactive cache explorer.
@main
struct StrataCommand: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "strata",
        abstract: "Explore multi-level cache pipelines live in the terminal.",
        discussion: """
        With no subcommand, opens the explorer (`strata explore`, options below) on the built-in demo
        pipeline (memory → disk → simulated origin) or --config FILE.
        Keys: : command line, g get, s set, w memory warning, 1-9 toggles, p pause, ? help, q quit.
        Exit status: 0 ok, 1 a command or check failed, 2 a usage, file or terminal error.
        """,
        version: StrataVersion.current,
        subcommands: [Explore.self, Check.self, Run.self, Sim.self],
        defaultSubcommand: Explore.self
    )

    /// Parses and runs with one error style: `strata: error: …` on stderr,
    /// status 2 for usage errors (as for a bad file or no terminal), 1 when a
    /// command ran and failed. Logs go through ``LogRouter`` from the start.
    static func main() async {
        LoggingSystem.bootstrap { ExplorerLogHandler(label: $0) }
        let arguments = Array(CommandLine.arguments.dropFirst())
        if ["--help", "-h", "help"].contains(arguments.first ?? "") && arguments.count == 1 {
            print(helpMessage() + "\n\n" + Explore.helpMessage())
            Foundation.exit(0)
        }
        if let first = arguments.first, !first.hasPrefix("-") {
            // The explorer (the default subcommand) takes no arguments, so a
            // bare word is a subcommand: a misspelt one gets a suggestion.
            let names = configuration.subcommands.map { $0._commandName } + ["help"]
            if !names.contains(first) {
                let suggestion = CommandSuggestion.closest(to: first, in: names).map { "; did you mean '\($0)'?" } ?? ""
                fail("unknown command '\(first)'\(suggestion) (see strata --help)")
            }
        }
        do {
            var command = try parseAsRoot(arguments)
            if var asyncCommand = command as? AsyncParsableCommand {
                try await asyncCommand.run()
            } else {
                try command.run()
            }
        } catch let code as ExitCode {
            Foundation.exit(code.rawValue)
        } catch {
            let code = exitCode(for: error)
            if code == .success {
                print(fullMessage(for: error))
                Foundation.exit(0)
            }
            let usage = code == .validationFailure
            fail(message(for: error) + (usage ? " (see strata --help)" : ""), code: usage ? 2 : code.rawValue)
        }
    }
}

/// "Did you mean": the closest name within two edits.
enum CommandSuggestion {
    static func closest(to word: String, in names: [String]) -> String? {
        let scored = names.map { ($0, distance(Array(word.lowercased()), Array($0))) }
        guard let best = scored.min(by: { $0.1 < $1.1 }), best.1 <= 2 else { return nil }
        return best.0
    }

    static func distance(_ a: [Character], _ b: [Character]) -> Int {
        var previous = Array(0...b.count)
        for (i, x) in a.enumerated() {
            var current = [i + 1] + Array(repeating: 0, count: b.count)
            for (j, y) in b.enumerated() {
                current[j + 1] = min(previous[j + 1] + 1, current[j] + 1, previous[j] + (x == y ? 0 : 1))
            }
            previous = current
        }
        return previous[b.count]
    }
}

enum StrataVersion {
    static let current = "0.1.0"
}

struct PipelineOptions: ParsableArguments {
    @Option(name: .shortAndLong, help: "A pipeline file (YAML). Default: the config directory's pipeline.yaml, else the demo.")
    var config: String?

    @Flag(help: "Only read the levels: commands that write, empty or reconfigure a level are refused; Redis and a disk level's own directory are never written (no back-fill, no lease).")
    var readonly = false

    func loadPipeline(paths: ExplorerPaths) throws -> PipelineSpec {
        if let config { return try PipelineFile.load(path: config) }
        if FileManager.default.fileExists(atPath: paths.defaultPipeline) {
            return try PipelineFile.load(path: paths.defaultPipeline)
        }
        return .demo
    }
}

/// Writes a one-line error to stderr and exits with `code`.
func fail(_ message: String, code: Int32 = 2) -> Never {
    FileHandle.standardError.write(Data("strata: error: \(message)\n".utf8))
    exit(code)
}

struct Explore: AsyncParsableCommand {
    static let configuration = CommandConfiguration(abstract: "Open the explorer (the default).")

    @OptionGroup var pipeline: PipelineOptions

    @Option(name: .shortAndLong, help: "Theme name (default, light, high-contrast, mono, or a user theme) or a .theme file.")
    var theme: String = "default"

    @Option(help: "Redraws per second (1-60).")
    var hz: Int = 10

    @Flag(help: "Attributes only, no colours (also when NO_COLOR is set).")
    var noColor = false

    @Flag(help: "ASCII borders and sparklines even in a UTF-8 locale.")
    var ascii = false

    @Flag(help: "Print the configuration and theme paths and exit.")
    var printPaths = false

    @Option(help: "Also append log lines to this file (on screen they go to the event log).")
    var logFile: String?

    @Flag(help: "Leave the mouse to the terminal (by default a click focuses a pane and the wheel scrolls the log).")
    var noMouse = false

    @Option(help: "A second pipeline file (B; --config is A): every command and workload goes to both, shown side by side.")
    var compare: String?

    func validate() throws {
        guard (1...60).contains(hz) else { throw ValidationError("--hz must be from 1 to 60") }
    }

    @MainActor
    func run() async throws {
        let paths = ExplorerPaths()
        if printPaths {
            print(paths.description)
            return
        }
        let spec: PipelineSpec
        let chosenTheme: Theme
        let model: ExplorerModel
        var comparison: ComparisonModel?
        do {
            if let logFile { try LogRouter.shared.addLogFile(path: logFile) }
            spec = try pipeline.loadPipeline(paths: paths)
            let other = try compare.map { try PipelineFile.load(path: $0) }
            chosenTheme = try Theme.load(theme, directories: [paths.themesDirectory])
            let built = try Pipeline(spec, readOnly: pipeline.readonly)
            if let other, let compare {
                let second: Pipeline
                do { second = try Pipeline(other, readOnly: pipeline.readonly) } catch {
                    await built.shutdown()  // its directories deleted before the error is shown
                    throw error
                }
                comparison = ComparisonModel(pipelineA: built, pipelineB: second, fileA: pipeline.config ?? spec.name, fileB: compare)
            }
            model = comparison?.a ?? ExplorerModel(pipeline: built)
        } catch {
            fail("\(error)")
        }
        let noColor = self.noColor || !(ProcessInfo.processInfo.environment["NO_COLOR"] ?? "").isEmpty
        let app: ExplorerApp
        do {
            app = try ExplorerApp(model: model, theme: chosenTheme, themeDirectories: [paths.themesDirectory],
                                  hz: hz, noColor: noColor, forceASCII: ascii,
                                  historyFile: HistoryFile(path: paths.historyFile), mouse: !noMouse, comparison: comparison)
        } catch {
            if let comparison { await comparison.shutdown() } else { await model.shutdown() }
            fail("\(error)")
        }
        let status: Int32 = await withCheckedContinuation { continuation in
            app.start { status in continuation.resume(returning: status) }
        }
        if status != 0 { throw ExitCode(status) }
    }
}

struct Check: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        abstract: "Validate a pipeline file and print the composed pipeline as a tree."
    )

    @Argument(help: "The pipeline file (YAML).")
    var file: String

    func run() async throws {
        let spec: PipelineSpec
        do { spec = try PipelineFile.load(path: file) } catch { fail("\(error)", code: 1) }
        print(spec.tree)
        do {
            try Pipeline.validate(spec)
            print("ok: the pipeline builds (checked without creating a directory or opening a connection)")
        } catch {
            fail("\(error)", code: 1)  // a PipelineBuildError names the file and the level's line
        }
    }
}

struct Run: AsyncParsableCommand {
    /// The largest script `--script` reads (a script of commands is text a person or a tool wrote).
    static let maxScriptBytes = 64 << 20
    static let configuration = CommandConfiguration(
        abstract: "Run explorer commands without a terminal and print the statistics.",
        discussion: """
        Commands come from --script FILE, or one per line on stdin; with --replay FILE (a strata trace, see docs/traces.md) \
        the trace is replayed after the script (stdin is not read without --script). With --compare B.yaml the same run \
        is made against a second pipeline, after the first, and both tables are printed side by side with their \
        differences. Exit status 1 if any command failed.
        """
    )

    @OptionGroup var pipeline: PipelineOptions

    @Option(name: .shortAndLong, help: "A file of commands, one per line (# comments).")
    var script: String?

    @Option(help: "Replay this strata trace (after the script, if any).")
    var replay: String?

    @Option(help: "With --replay: a multiplier of the trace's pace (2 twice as fast), or max (default 1).")
    var speed: String = "1"

    @Option(help: "A second pipeline file: the same commands and trace run against it too, and both are printed side by side with their differences.")
    var compare: String?

    @Flag(help: "Print the final statistics as JSON.")
    var json = false

    func validate() throws {
        do { _ = try TraceCommands.speed(speed) } catch { throw ValidationError("--speed: \(error.message)") }
    }

    @Option(help: "Append log lines to this file as well as stderr.")
    var logFile: String?

    func run() async throws {
        // Each way out below, and a signal, shuts the model down first (its disk
        // levels retired, then their temporary directories deleted). Listening
        // starts before the pipeline is built, so that no signal finds its
        // directories made and nothing to delete them.
        let signals = ShutdownSignals()
        let paths = ExplorerPaths()
        let spec: PipelineSpec, other: PipelineSpec?
        do {
            if let logFile { try LogRouter.shared.addLogFile(path: logFile) }
            spec = try pipeline.loadPipeline(paths: paths)
            other = try compare.map { try PipelineFile.load(path: $0) }
        } catch {
            fail("\(error)")
        }
        // Built before stdin is read: a signal while it waits shuts it down.
        let first = Self.model(spec, readOnly: pipeline.readonly, signals: signals)
        let text: String
        do { text = try readCommands() } catch {
            await first.shutdown()
            fail(error.message)
        }
        guard let other, let compare else {
            let (failures, output) = await session(first, text, label: nil) { runner in
                json ? runner.statisticsJSON() : "\n" + runner.statisticsTable()
            }
            print(output)
            signals.cancel()
            if failures > 0 { throw ExitCode(1) }
            return
        }
        // One pipeline after the other, so neither slows the other down.
        let a = "A: \(pipeline.config ?? spec.name)", b = "B: \(compare)"
        let (failuresA, sideA) = await session(first, text, label: a) { runner in
            (PipelineComparison.Side(label: a, model: runner.model), runner.statisticsJSON())
        }
        let (failuresB, sideB) = await session(Self.model(other, readOnly: pipeline.readonly, signals: signals), text, label: b) { runner in
            (PipelineComparison.Side(label: b, model: runner.model), runner.statisticsJSON())
        }
        print(json ? "{\"a\": \(sideA.1),\n\"b\": \(sideB.1)}" : PipelineComparison(sideA.0, sideB.0).text)
        signals.cancel()
        if failuresA + failuresB > 0 { throw ExitCode(1) }
    }

    /// The model of `spec`, which a signal from now on shuts down.
    static func model(_ spec: PipelineSpec, readOnly: Bool, signals: ShutdownSignals) -> ExplorerModel {
        let model: ExplorerModel
        do { model = ExplorerModel(pipeline: try Pipeline(spec, readOnly: readOnly)) } catch {
            fail("\(error)")  // a pipeline that failed to build deleted what it had made
        }
        signals.shutsDown(model)
        return model
    }

    /// Runs the commands of `text` and the `--replay` trace on `model`, and
    /// returns the failed commands and `report(runner)` made before the model
    /// shuts down. With a `label` (comparing), outcomes are not printed and
    /// errors name the pipeline.
    func session<Report>(_ model: ExplorerModel, _ text: String, label: String?,
                         report: (ScriptRunner) -> Report) async -> (Int, Report) {
        let quiet = json || label != nil
        let runner = ScriptRunner(
            model: model,
            write: { if !quiet { print($0) } },
            writeError: { FileHandle.standardError.write(Data("strata: \(label.map { "\($0): " } ?? "")\($0)\n".utf8)) }
        )
        var failures = await runner.run(lines: ScriptRunner.lines(of: text), source: script ?? "stdin")
        if let replay {
            let pace: Double?
            do { pace = try TraceCommands.speed(speed) } catch { fail("--speed: \(error.message)") }
            let line = "replay \(replay) \(pace.map { String(format: "%g", $0) } ?? "max")"
            if await !runner.perform(.replay(path: replay, speed: pace), line: line, location: "--replay") { failures += 1 }
            await runner.finish()
        }
        let output = report(runner)
        await model.shutdown()
        return (failures, output)
    }

    /// Why the script cannot be run.
    struct ScriptUnreadable: Error {
        let message: String
    }

    /// The script's text, or stdin's lines.
    func readCommands() throws(ScriptUnreadable) -> String {
        if script == nil && replay != nil { return "" }
        guard let script else {
            var lines: [String] = []
            while let line = readLine(strippingNewline: true) { lines.append(line) }
            return lines.joined(separator: "\n")
        }
        // Only a regular file of bounded size: a FIFO is not waited on,
        // nor /dev/zero read for ever, nor a huge file held in memory.
        do {
            return String(decoding: try SmallFile.contents(of: script, limit: Self.maxScriptBytes), as: UTF8.self)
        } catch {
            switch error {
            case .notRegularFile(let kind): throw ScriptUnreadable(message: "\(script): not a regular file (it is \(kind))")
            case .tooLarge: throw ScriptUnreadable(message: "\(script): the file is larger than 64 MiB, the limit for a script")
            case .cannotOpen, .readFailed: throw ScriptUnreadable(message: "cannot read \(script)")
            }
        }
    }
}

/// While `strata run` runs: SIGINT, SIGTERM or SIGHUP shuts the model down
/// and exits with 128 + the signal (a second signal exits at once). One that
/// comes while the pipeline is being built waits for it (the directories it
/// makes are then deleted), or exits at once if the build fails.
struct ShutdownSignals {
    private static let received = Atomic<Bool>(false)
    private let sources: [any DispatchSourceSignal]
    private let model = PendingModel()

    /// The model once built, or the signal that came before it was.
    final class PendingModel: Sendable {
        private let state = Mutex<(model: ExplorerModel?, signal: Int32?)>((nil, nil))
        func withLock<T>(_ body: (inout (model: ExplorerModel?, signal: Int32?)) -> T) -> T {
            state.withLock { body(&$0) }
        }
    }

    init() {
        let model = self.model
        sources = SignalSources.make([SIGINT, SIGTERM, SIGHUP], queue: .global()) { number in
            if Self.received.exchange(true, ordering: .relaxed) { Foundation.exit(128 + number) }
            // No model yet: the one being built shuts down as soon as it is handed over.
            guard let current = model.withLock({ state -> ExplorerModel? in
                if state.model == nil { state.signal = number }
                return state.model
            }) else { return }
            Self.shutDown(current, number)
        }
    }

    /// From now on a signal shuts `model` down; so does one that came while it was built.
    func shutsDown(_ model: ExplorerModel) {
        let pending = self.model.withLock { state -> Int32? in
            state.model = model
            return state.signal
        }
        if let pending { Self.shutDown(model, pending) }
    }

    private static func shutDown(_ model: ExplorerModel, _ number: Int32) {
        Task {
            await model.shutdown()
            Foundation.exit(128 + number)
        }
    }

    func cancel() { for source in sources { source.cancel() } }
}

/// `strata sim`: parses its options into a `SimulationRun` (StrataSim does the work).
struct Sim: ParsableCommand {
    static let configuration = CommandConfiguration(
        abstract: "Replay traces or generated workloads against eviction policies and print hit ratios.",
        discussion: """
        Each input is a trace file, plain or gzip: LIRS (one integer key per line; blank and * lines \
        skipped), one key per line, CSV key[,size] (with sizes, capacities are bytes), or a strata trace \
        (#strata-trace 1, what the explorer's :record writes; its gets and sets). Or a workload: \
        \(Workload.forms.joined(separator: ", ")).
        Policies: \(PolicyKind.all.map { "\($0.name) (\($0.summary))" }.joined(separator: "; ")).
        Under the table: each row's best policy other than optimal and its gap to optimal (points), and \
        per trace each policy's mean over the sizes. --curve replays capacities that double up to the \
        trace's working set (or --sizes) and recommends the smallest within --within points of the best \
        ratio tried.
        Example: strata sim --sizes 500,1000,2000 traces/*.trace.gz; strata sim --curve --policies adaptive trace.gz
        """
    )

    @Argument(help: ArgumentHelp("Trace files or workload specs.", valueName: "input"))
    var inputs: [String] = []

    @Option(help: "Cache sizes, comma-separated (objects; bytes for traces with sizes), each at most 2^50 (default 1000; with --curve, powers of two up to the working set).")
    var sizes: String?

    @Option(help: "Policies, comma-separated.")
    var policies: String = "lru,adaptive,optimal"

    @Option(help: "Seed for generated workloads and the memory level's key hashes (a run repeats exactly for a seed).")
    var seed: UInt64 = 42

    @Flag(help: "Print the hit-ratio curve over capacities and recommend one.")
    var curve = false

    @Option(help: "With --curve: recommend the smallest capacity within this many points of the best ratio tried.")
    var within: Double = 1

    @Option(help: "Trace file format: auto, lirs, keys, csv or strata.")
    var format: String = "auto"

    @Flag(help: "Print JSON, one object per trace, size and policy.")
    var json = false

    @Flag(help: "Print CSV, one row per trace, size and policy.")
    var csv = false

    @Flag(help: "Never draw the progress bar (it is drawn on a terminal once a run passes a second).")
    var noProgress = false

    func run() throws {
        if json && csv { fail("choose one of --json and --csv") }
        let simulation: SimulationRun
        let traces: [Trace]
        do {
            simulation = try SimulationRun(inputs: inputs, sizes: sizes, policies: policies, seed: seed,
                                           format: format, output: json ? .json : csv ? .csv : .table,
                                           curveWithin: curve ? within : nil)
        } catch {
            fail("\(error)")
        }
        do { traces = try simulation.loadTraces() } catch { fail("\(error)", code: 1) }
        let drawProgress = !noProgress && isatty(STDERR_FILENO) != 0
        print(simulation.run(traces, progress: drawProgress ? { total in
            ProgressBar(total: total) { FileHandle.standardError.write(Data($0.utf8)) }
        } : nil))
    }
}
