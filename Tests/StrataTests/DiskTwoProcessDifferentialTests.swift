import Foundation
import Strata
import StrataTestSupport
import Synchronization
import Testing

/// Two real processes share one disk directory, each with `memory + disk`:
/// this one and a `StrataDiskWorker DIR serve`. A seeded random sequence of
/// sets, removes, clears, gets and loading gets (on either process), and
/// deletions of the whole directory, is checked against a model: per key,
/// the value its last set wrote, or none after a remove, a clear or the
/// directory's deletion; and the values loading gets loaded since (a load's
/// landing may be declined, so the key may then read as a miss, or as any
/// of them in a process that keeps its own load above the disk):
///
/// 1. the process that wrote reads its write at once (read-your-writes);
/// 2. a loading get answers the value set, else one loaded since, or its
///    own loader's;
/// 3. after each step, both processes answer an admissible value for every
///    key within `STRATA_DISK_DIFF_WAIT_MS` (10,000 ms: the other process
///    hears of a change through its inotify watch): the value set, else a
///    miss or a value loaded since the last write, and still do once their
///    back-fills have landed; no removed or overwritten value comes back.
///
/// A failure prints the seed and the steps. `STRATA_DISK_DIFF_SEEDS` (8),
/// `STRATA_DISK_DIFF_FIRST_SEED` (1) and `STRATA_DISK_DIFF_OPS` (40) change the run.
@Suite(.serialized) struct DiskTwoProcessDifferentialTests {
    static func environment(_ name: String) -> Int? { ProcessInfo.processInfo.environment[name].flatMap { Int($0) } }

    /// The worker process and the lines it printed; one answer line per command.
    final class Worker: Sendable {
        let process = Process()
        private let input: FileHandle
        private let lines: ChildLines

        init(directory: String) throws {
            process.executableURL = productsDirectory.appendingPathComponent("StrataDiskWorker")
            process.arguments = [directory, "serve"]
            let stdin = Pipe(), stdout = Pipe()
            process.standardInput = stdin
            process.standardOutput = stdout
            input = stdin.fileHandleForWriting
            try process.run()
            lines = ChildLines(stdout.fileHandleForReading)
        }

        var count: Int { lines.all.count }

        /// Sends `command`; its answer (the next line), or `nil` after 30 s.
        func ask(_ command: String) async -> String? {
            let before = count
            input.write(Data((command + "\n").utf8))
            guard await poll(timeout: .seconds(30), { count > before }) else { return nil }
            return lines.all[before]
        }

        /// Asks it to quit; whether it did within 30 s.
        func quit() async -> Bool {
            input.write(Data("quit\n".utf8))
            return await process.exit(within: .seconds(30))
        }

        func waitUntilReady() async -> Bool { await poll { lines.all.first == "ready" } }
    }

    /// One of the two processes, asked alike.
    enum Actor {
        case here(any CacheLevel<String, String>)
        case worker(Worker)

        var name: String { if case .here = self { "A" } else { "B" } }

        /// The value it answers for `key` now (`nil`: a miss), after its back-fills.
        func get(_ key: String) async throws -> String? {
            switch self {
            case .here(let stack):
                let value = try await stack.getIfPresent(key)
                await stack.waitForPendingWrites()
                return value
            case .worker(let worker):
                let answer = await worker.ask("get \(key)")
                if answer == "miss \(key)" { return nil }
                guard let answer, answer.hasPrefix("value \(key) ") else { throw Failure("B answered \(answer ?? "nothing") to get \(key)") }
                return String(answer.dropFirst("value \(key) ".count))
            }
        }

        func write(_ command: String, _ body: (any CacheLevel<String, String>) async throws -> Void) async throws {
            switch self {
            case .here(let stack): try await body(stack)
            case .worker(let worker):
                let answer = await worker.ask(command)
                guard answer == "done" else { throw Failure("B answered \(answer ?? "nothing") to \(command)") }
            }
        }

        func load(_ key: String, _ value: String) async throws -> String {
            switch self {
            case .here(let stack):
                let composed = stack as! ComposedCache<MemoryCacheLevel<String, String>, DiskCacheLevel<String, String>>
                let answer = try await composed.get(key, ttl: .seconds(60)) { _ in value }
                await stack.waitForPendingWrites()
                return answer
            case .worker(let worker):
                let answer = await worker.ask("load \(key) \(value)")
                guard let answer, answer.hasPrefix("value \(key) ") else { throw Failure("B answered \(answer ?? "nothing") to load \(key)") }
                return String(answer.dropFirst("value \(key) ".count))
            }
        }
    }

    struct Failure: Error, CustomStringConvertible {
        let description: String
        init(_ description: String) { self.description = description }
    }

    static let keys = ["a", "b", "c"]

    /// What a key may read as: the value its last set wrote, else a miss or
    /// a value loaded since its last write.
    struct Admissible: CustomStringConvertible {
        var written: String?
        var loaded: Set<String> = []

        func admits(_ answer: String?) -> Bool {
            if let written { return answer == written }
            return answer.map { loaded.contains($0) } ?? true
        }

        /// A loading get whose loader answers `loader`.
        func admits(loaded answer: String, loader: String) -> Bool {
            if let written { return answer == written }
            return answer == loader || loaded.contains(answer)
        }

        var description: String { written.map { "set \($0)" } ?? "a miss or one of \(loaded.sorted())" }
    }

    @Test func twoProcessesOnOneDirectoryAnswerLikeTheModel() async throws {
        let first = UInt64(Self.environment("STRATA_DISK_DIFF_FIRST_SEED") ?? 1)
        let count = UInt64(Self.environment("STRATA_DISK_DIFF_SEEDS") ?? 8)
        for seed in first..<(first + count) {
            var log: [String] = []
            do { try await run(seed: seed, log: &log) } catch {
                let steps = log.joined(separator: "\n")
                Issue.record("seed \(seed) (STRATA_DISK_DIFF_FIRST_SEED=\(seed) STRATA_DISK_DIFF_SEEDS=1): \(error)\n\(steps)")
            }
        }
    }

    func run(seed: UInt64, log: inout [String]) async throws {
        var random = SeededGenerator(seed: seed)
        let dir = TemporaryDirectory("strata-disk-diff"); defer { dir.remove() }
        let disk = try DiskCacheLevel<String, String>(directory: dir.url, capacity: 1 << 20)
        let stack = MemoryCacheLevel<String, String>(capacity: 1 << 20) + disk
        let worker = try Worker(directory: dir.path)
        defer { worker.process.terminate() }
        guard await worker.waitUntilReady() else { throw Failure("the worker did not start") }
        let actors: [Actor] = [.here(stack), .worker(worker)]
        let wait = Duration.milliseconds(Self.environment("STRATA_DISK_DIFF_WAIT_MS") ?? 10_000)
        var model: [String: Admissible] = [:]
        for step in 0..<(Self.environment("STRATA_DISK_DIFF_OPS") ?? 40) {
            let actor = random.pick(actors), key = random.pick(Self.keys), value = "v\(step)"
            var wrote = false
            switch random.int(0..<20) {
            case 0..<6:
                log.append("\(step) \(actor.name) set \(key) \(value)")
                try await actor.write("set \(key) \(value)") { try await $0.set(value, forKey: key) }
                model[key] = Admissible(written: value)
                wrote = true
            case 6..<9:
                log.append("\(step) \(actor.name) remove \(key)")
                try await actor.write("remove \(key)") { try await $0.remove(key) }
                model[key] = nil
                wrote = true
            case 9:
                log.append("\(step) \(actor.name) clear")
                try await actor.write("clear") { await $0.clear() }
                model = [:]
            case 10..<14:
                let answer = try await actor.load(key, value)
                log.append("\(step) \(actor.name) load \(key) (loader: \(value)) -> \(answer)")
                let admissible = model[key, default: Admissible()]
                guard admissible.admits(loaded: answer, loader: value) else {
                    throw Failure("step \(step): load answered \(answer), the model \(admissible)")
                }
                model[key, default: Admissible()].loaded.insert(answer)
            case 14..<19:
                let answer = try await actor.get(key)
                log.append("\(step) \(actor.name) get \(key) -> \(answer ?? "miss")")
                guard model[key, default: Admissible()].admits(answer) else {
                    throw Failure("step \(step): get answered \(answer ?? "miss"), the model \(model[key, default: Admissible()])")
                }
            default:
                log.append("\(step) the directory is deleted")
                try? FileManager.default.removeItem(at: dir.url)
                model = [:]
            }
            if wrote {
                let answer = try await actor.get(key)
                guard answer == model[key]?.written else {
                    throw Failure("step \(step): \(actor.name) read \(answer ?? "miss") after its own write, the model \(model[key, default: Admissible()])")
                }
            }
            // Both converge on the model, and stay there once their back-fills landed.
            for other in actors {
                for key in Self.keys {
                    var last: String?
                    let admissible = model[key, default: Admissible()]
                    let converged = try await poll(timeout: wait) {
                        last = try await other.get(key)
                        return admissible.admits(last)
                    }
                    guard converged else {
                        throw Failure("step \(step): \(other.name) still answers \(last ?? "miss") for \(key) after \(wait), the model \(admissible)")
                    }
                }
            }
        }
        #expect(await worker.quit(), "the worker quit when asked")
    }
}

/// ``poll(timeout:_:)`` for a condition that throws.
private func poll(timeout: Duration, _ condition: () async throws -> Bool) async throws -> Bool {
    let deadline = ContinuousClock.now + timeout
    while ContinuousClock.now < deadline {
        if try await condition() { return true }
        try? await Task.sleep(for: .milliseconds(2))
    }
    return try await condition()
}
