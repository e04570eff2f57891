import Foundation
import Strata
@testable import StrataExplorer
import StrataSim
import StrataTestSupport
import Testing

/// `record FILE`, `replay FILE [SPEED]` and `load trace FILE` on the model:
/// a round trip that repeats the counters, LIRS and key files, and the
/// ways a recording or a replay fails.
@Suite struct TraceRecordReplayTests {
    /// Memory with room for every key above an origin that never fails: the
    /// same requests in the same order give the same counters. (With
    /// evictions they need not: which keys a full level keeps depends on when
    /// each back-fill lands, and on a loaded machine the recording's and the
    /// replay's differed.)
    static func deterministicSpec() -> PipelineSpec {
        PipelineSpec(name: "deterministic", levels: [
            LevelSpec(name: "L1", kind: .memory(capacity: 1 << 20, countLimit: 1000), policy: .lru),
            LevelSpec(name: "origin", kind: .origin(latency: .zero, jitter: .zero, failureRate: 0, valueSize: 32)),
        ])
    }

    static func counters(_ model: ExplorerModel) -> [[Int]] {
        model.currentPanes().map { pane in
            let s = pane.stats
            return [s.gets, s.hits, s.misses, s.sets, s.removes, s.clears, s.backfills].map { Int($0) }
        }
    }

    /// Polls `condition` until it holds or `seconds` pass (a background
    /// writer or replay: there is no event to await).
    static func eventually(_ seconds: Double = 60, _ condition: () -> Bool) async -> Bool {
        let deadline = ContinuousClock.now + .seconds(seconds)
        while ContinuousClock.now < deadline {
            if condition() { return true }
            try? await Task.sleep(for: .milliseconds(20))
        }
        return condition()
    }

    @Test func recordThenReplayRepeatsTheCounters() async throws {
        let directory = TemporaryDirectory("strata-record")
        defer { directory.remove() }
        let file = directory.path + "/session.trace"
        let recorded = ExplorerModel(pipeline: try Pipeline(Self.deterministicSpec()))
        let expected = try await recorded.withShutdown {
            #expect(await recorded.execute(.record(path: file)).message == "recording to \(file) (record stop ends it)")
            #expect(recorded.recordingDescription == "REC session 0")
            _ = await recorded.execute(.get(key: "user 1"))  // a key with a space, as a trace may hold
            _ = await recorded.execute(.set(key: "b", value: "hello"))
            _ = await recorded.execute(.get(key: "b"))
            // One worker (50/s) over 1000 keys in a loop: a miss each (a
            // workload get does not wait for its back-fill, so a key it asked
            // for again soon after could miss or hit by timing), stopped after
            // 40 gets (not by a time limit, which a loaded machine may reach
            // before the first get). Then typed gets of its keys: hits.
            _ = await recorded.execute(.load(pattern: .loop, keys: 1000, rate: 50, seconds: nil))
            let workload = try #require(recorded.workload)
            #expect(await Self.eventually { workload.completed >= 40 })
            _ = await recorded.execute(.loadStop)
            await workload.finished()
            await recorded.pipeline.cache.waitForPendingWrites()
            for key in 0..<5 { _ = await recorded.execute(.get(key: "key:\(key)")) }
            _ = await recorded.execute(.remove(key: "b"))
            _ = await recorded.execute(.clear(level: "L1"))
            _ = await recorded.execute(.get(key: "b"))
            let stopped = await recorded.execute(.recordStop)
            #expect(stopped.message.hasPrefix("recorded ") && stopped.message.hasSuffix(" requests to \(file)"), "\(stopped.message)")
            #expect(recorded.recordingDescription == nil)
            return Self.counters(recorded)
        }
        let requests = try RecordedTrace.read(path: file)
        #expect(requests.count >= 40 + 11, "the workload's gets are recorded too")
        #expect(requests.first?.operation == .get(key: "user 1"))
        #expect(requests.contains { $0.operation == .set(key: "b", valueSize: 5) })
        #expect(requests.contains { $0.operation == .clear(level: "L1") })
        #expect(try String(contentsOfFile: file, encoding: .utf8).contains(" get user%201\n"))

        let replayed = ExplorerModel(pipeline: try Pipeline(Self.deterministicSpec()))
        await replayed.withShutdown {
            let started = await replayed.execute(.replay(path: file, speed: 1))
            #expect(started.message == "replay session started: \(requests.count) requests, ×1 (load stop ends it)")
            #expect(replayed.workloadDescription?.hasPrefix("replay session ") == true)
            await replayed.replayFinished()
            #expect(Self.counters(replayed) == expected, "the replay's counters differ from the recording's")
            #expect(replayed.workloadDescription == nil)
            #expect(replayed.events.contains { $0.text.hasPrefix("replay session finished: \(requests.count) requests in ") })
        }
    }

    @Test func loadTraceReplaysALIRSTraceAsGets() async throws {
        let trace = URL(fileURLWithPath: #filePath).deletingLastPathComponent()
            .appendingPathComponent("../StrataSimTests/Traces/multi1.trace.gz").standardized.path
        let keys = try TraceReader().read(path: trace)
        let spec = PipelineSpec(name: "lirs", levels: [
            LevelSpec(name: "L1", kind: .memory(capacity: 1 << 30, countLimit: 1_000_000)),
            LevelSpec(name: "origin", kind: .origin(latency: .zero, jitter: .zero, failureRate: 0, valueSize: 8)),
        ])
        let model = ExplorerModel(pipeline: try Pipeline(spec))
        await model.withShutdown {
            let started = await model.execute(.loadTrace(path: trace, rate: nil))
            #expect(started.message.hasPrefix("load trace multi1 started: \(keys.count) requests, as fast as possible"), "\(started.message)")
            await model.replayFinished()
            let panes = model.currentPanes()
            #expect(panes[0].stats.gets == UInt64(keys.count))
            // Nothing is evicted, so the origin is asked once per distinct key.
            #expect(panes[1].stats.gets == UInt64(keys.distinctKeys), "\(Self.counters(model))")
            #expect(model.pipeline.levels[0].holds?("key:\(keys.keys[0])") == true, "LIRS key N is requested as key:N")
        }
    }

    @Test func loadTraceReadsOneKeyPerLine() async throws {
        let directory = TemporaryDirectory("strata-keys")
        defer { directory.remove() }
        let file = directory.path + "/keys.txt"
        try "a\nb\n\na\n*\n7\n".write(toFile: file, atomically: true, encoding: .utf8)
        let model = ExplorerModel(pipeline: try Pipeline(Self.deterministicSpec()))
        await model.withShutdown {
            _ = await model.execute(.loadTrace(path: file, rate: 1000))
            await model.replayFinished()
            #expect(Self.counters(model)[0].prefix(3) == [4, 1, 3], "a, b, a, key:7: one hit")
            #expect(model.pipeline.levels[0].holds?("key:7") == true)
        }
    }

    /// Random bytes as a `load trace` file: requests, or a `TraceError`
    /// naming a line of the input; nothing traps, and every key read is one
    /// a typed command would accept.
    @Test func keyListFuzz() {
        var random = SplitMix64(seed: 35)
        let alphabet = Array("0123456789-+* \t\r\nkey:é#strata-trace".utf8) + [0x00, 0x01, 0x1B, 0xFF, 0xC3]
        for _ in 0..<20_000 {
            let bytes = (0..<Int.random(in: 0..<40, using: &random)).map { _ in alphabet.randomElement(using: &random)! }
            let lines = bytes.split(separator: UInt8(ascii: "\n"), omittingEmptySubsequences: false).count
            do {
                let requests = try KeyListTrace.parse(bytes, file: "k", rate: 100)
                for request in requests {
                    guard case .get(let key) = request.operation else { Issue.record("not a get: \(request)"); continue }
                    #expect(throws: Never.self) { try CommandParser.validate(key: key) }
                }
            } catch {
                switch error {
                case .malformed(let file, let line, _): #expect(file == "k" && (1...lines).contains(line))
                case .empty(let file): #expect(file == "k")
                default: Issue.record("unexpected \(error)")
                }
            }
        }
        #expect((try? KeyListTrace.parse(Array("3\nx y\n".utf8), file: "k", rate: 2)) == [
            RecordedRequest(offsetMicroseconds: 0, .get(key: "key:3")), RecordedRequest(offsetMicroseconds: 500_000, .get(key: "x y")),
        ])
    }

    @Test func errorsNameTheFileAndLine() async throws {
        let directory = TemporaryDirectory("strata-trace-errors")
        defer { directory.remove() }
        let bad = directory.path + "/bad.trace"
        try "#strata-trace 1\n0 get a\n1 fetch b\n".write(toFile: bad, atomically: true, encoding: .utf8)
        let keys = directory.path + "/keys.txt"
        try "a\n#strata-trace 1\n".write(toFile: keys, atomically: true, encoding: .utf8)
        let model = ExplorerModel(pipeline: try Pipeline(Self.deterministicSpec()))
        await model.withShutdown {
            let cases: [(Command, String)] = [
                (.replay(path: directory.path + "/none.trace", speed: 1), "\(directory.path)/none.trace: no such file"),
                (.replay(path: bad, speed: nil), "\(bad):3: malformed line: unknown operation \"fetch\" (get, set, rm or clear)"),
                (.replay(path: keys, speed: nil), "\(keys):1: malformed line: expected the header \"#strata-trace 1\", found \"a\""),
                (.loadTrace(path: directory.path + "/none.txt", rate: nil), "\(directory.path)/none.txt: no such file"),
                (.record(path: directory.path + "/missing/x.trace"),
                 "cannot record to \(directory.path)/missing/x.trace: No such file or directory"),
                (.record(path: directory.path), "cannot record to \(directory.path): it is a directory"),
                (.recordStop, "not recording"),
                (.loadStop, "no workload is running"),
            ]
            for (command, message) in cases {
                #expect(await model.execute(command) == CommandOutcome(message, isError: true), "\(command)")
            }
            #expect(model.workloadDescription == nil && model.recordingDescription == nil)
        }
    }

    @Test func parsesTheTraceCommands() throws {
        let home = ProcessInfo.processInfo.environment["HOME"] ?? ""
        #expect(try CommandParser.parse("record t.trace") == .record(path: "t.trace"))
        #expect(try CommandParser.parse("record ~/t.trace") == .record(path: home + "/t.trace"))
        #expect(try CommandParser.parse("record stop") == .recordStop)
        #expect(try CommandParser.parse("replay t.trace") == .replay(path: "t.trace", speed: 1))
        #expect(try CommandParser.parse("replay t.trace 2x") == .replay(path: "t.trace", speed: 2))
        #expect(try CommandParser.parse("replay t.trace MAX") == .replay(path: "t.trace", speed: nil))
        #expect(try CommandParser.parse("load trace k.txt") == .loadTrace(path: "k.txt", rate: nil))
        #expect(try CommandParser.parse("load trace k.txt 500") == .loadTrace(path: "k.txt", rate: 500))
        let errors: [(String, String)] = [
            ("record", "usage: record FILE | record stop"),
            ("record a b", "usage: record FILE | record stop"),
            ("replay", "usage: replay FILE [SPEED|max] (SPEED a multiplier such as 2 or 0.5; default 1)"),
            ("replay t 0", "SPEED must be a multiplier from 0.001 to 1000 (such as 2 or 0.5) or max, got '0'"),
            ("replay t nan", "SPEED must be a multiplier from 0.001 to 1000 (such as 2 or 0.5) or max, got 'nan'"),
            ("load trace", "usage: load trace FILE [RATE|max] (RATE gets per second; default max)"),
            ("load trace k 0", "RATE (gets per second) must be from 1 to 10000000 or max, got '0'"),
            ("replay a\u{1B}b", "file name contains control characters"),
        ]
        for (line, message) in errors {
            #expect(throws: CommandError(message), "\(line)") { try CommandParser.parse(line) }
        }
    }

    /// A second `record` ends the first, also on the same file: the file
    /// then holds the second recording alone, whole.
    @Test func aSecondRecordEndsTheFirst() async throws {
        let directory = TemporaryDirectory("strata-record-twice")
        defer { directory.remove() }
        let file = directory.path + "/t.trace"
        let model = ExplorerModel(pipeline: try Pipeline(Self.deterministicSpec()))
        await model.withShutdown {
            _ = await model.execute(.record(path: file))
            for key in 0..<100 { _ = await model.execute(.get(key: "first:\(key)")) }
            let second = await model.execute(.record(path: file))
            #expect(second.message == "recorded 100 requests to \(file); recording to \(file) (record stop ends it)")
            _ = await model.execute(.get(key: "second"))
            _ = await model.execute(.recordStop)
        }
        #expect(try RecordedTrace.read(path: file).map(\.operation) == [.get(key: "second")])
    }

    /// A full disk (`/dev/full`) and a deleted directory end the recording
    /// with one line in the log and the status; the explorer goes on.
    @Test func aFailedWriteEndsTheRecording() async throws {
        let model = ExplorerModel(pipeline: try Pipeline(Self.deterministicSpec()))
        await model.withShutdown {
            #expect(!(await model.execute(.record(path: "/dev/full"))).isError)
            _ = await model.execute(.get(key: "a"))
            let ended = await Self.eventually { model.recordingDescription == nil }
            #expect(ended, "a write to /dev/full ended the recording")
            #expect(model.events.contains {
                $0.isError && $0.text == "recording to /dev/full ended after 1 requests: No space left on device"
            }, "\(model.events.map(\.text))")
            #expect(!(await model.execute(.get(key: "b"))).isError, "the explorer goes on")

            let directory = TemporaryDirectory("strata-record-gone")
            let file = directory.path + "/x.trace"
            #expect(!(await model.execute(.record(path: file))).isError)
            directory.remove()
            _ = await model.execute(.get(key: "c"))
            #expect(await Self.eventually { model.recordingDescription == nil })
            // The status line may show the get since; the log keeps the message.
            #expect(model.events.contains {
                $0.isError && $0.text.hasPrefix("recording to \(file) ended after ")
                    && $0.text.hasSuffix("requests: the file was deleted (or its directory)")
            }, "\(model.events.map(\.text))")
        }
    }

    @Test func loadStopAndANewLoadEndAReplay() async throws {
        let directory = TemporaryDirectory("strata-replay-stop")
        defer { directory.remove() }
        let file = directory.path + "/slow.trace"
        // Ten gets a minute apart: at ×1 the first is sent at once, the second a minute later.
        let lines = (0..<10).map { "\($0 * 60_000) get k\($0)" }
        try ([RecordedTrace.header] + lines).joined(separator: "\n").write(toFile: file, atomically: true, encoding: .utf8)
        let model = ExplorerModel(pipeline: try Pipeline(Self.deterministicSpec()))
        await model.withShutdown {
            _ = await model.execute(.replay(path: file, speed: 1))
            #expect(await Self.eventually { model.replay?.completed == 1 })
            #expect(model.workloadDescription == "replay slow 1/10 10% ×1")
            _ = await model.execute(.reset)  // waits for no request in flight, then zeroes
            let stopped = await model.execute(.loadStop)
            #expect(stopped.message == "replay slow stopped after 1 of 10 requests")
            #expect(model.workloadDescription == nil)

            _ = await model.execute(.replay(path: file, speed: 1))
            let replaced = await model.execute(.load(pattern: .zipf, keys: 10, rate: 10, seconds: nil))
            #expect(replaced.message == "workload started (load stop ends it)")
            #expect(model.events.contains { $0.text.hasPrefix("load: replay slow stopped after ") })
            #expect(model.workloadDescription?.hasPrefix("load zipf") == true)
        }
    }
}
