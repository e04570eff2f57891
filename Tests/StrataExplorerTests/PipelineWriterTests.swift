import Foundation
import Strata
@testable import StrataExplorer
import StrataTestSupport
import Testing

/// `:save` writes a pipeline file that `strata check` accepts and that loads
/// back to the same configuration, for every level kind and option the
/// file format has.
@Suite struct PipelineWriterTests {
    /// Every kind, every option, and text that needs quoting.
    static func everything(directory: String) -> PipelineSpec {
        var memory = LevelSpec(name: "L1", kind: .memory(capacity: 64 * 1024, countLimit: 100), ttl: .seconds(60),
                               pooled: true, capRequests: 8, condition: "mem", policy: .lru)
        memory.sliding = .seconds(5)
        return PipelineSpec(name: "null", levels: [
            memory,
            LevelSpec(name: "L1b", kind: .memory(capacity: 1000, countLimit: nil), policy: .adaptive),
            LevelSpec(name: "L2", kind: .disk(path: directory + "/a \"quoted\" dir: #1", capacity: 3 << 20),
                      ttl: .seconds(90), policy: .adaptive),
            LevelSpec(name: "tmp", kind: .disk(path: nil, capacity: 12_345)),
            LevelSpec(name: "shared", kind: .redis(url: "redis://:p%40ss@127.0.0.1:6379/2", prefix: "a \"q\" \\ ~ prefix:",
                                                   leases: true), ttl: .milliseconds(1500), condition: "redis-on"),
            LevelSpec(name: "plain", kind: .redis(url: "redis://127.0.0.1:1", prefix: "p:", leases: false)),
            LevelSpec(name: "web", kind: .http(baseURL: "http://127.0.0.1:8080/x?y=#", timeout: .milliseconds(250)),
                      capRequests: 4),
            LevelSpec(name: "origin", kind: .origin(latency: .microseconds(1500), jitter: .zero, failureRate: 0.025,
                                                    valueSize: 1000), pooled: true),
        ], failSafe: FailSafeSpec(maxStale: .seconds(3600), softTimeout: .milliseconds(100), hardTimeout: .seconds(2)))
    }

    @Test func everyKindAndOptionRoundTrips() throws {
        let directory = TemporaryDirectory("strata-writer")
        defer { directory.remove() }
        let spec = Self.everything(directory: directory.url.path)
        let text = PipelineWriter.yaml(spec)
        let read = try PipelineFile.parse(text, file: "saved.yaml")
        #expect(read.sameConfiguration(as: spec), "\(text)")
        #expect(read.name == "null")  // quoted: text, not a YAML null
        // Written again, the same text.
        #expect(PipelineWriter.yaml(read) == text)
        try Pipeline.validate(read)
    }

    /// `strata check` (the binary) accepts a saved file.
    @Test func strataCheckAcceptsASavedFile() async throws {
        let directory = TemporaryDirectory("strata-writer")
        defer { directory.remove() }
        let path = directory.url.path + "/saved.yaml"
        try PipelineWriter.yaml(Self.everything(directory: directory.url.path)).write(toFile: path, atomically: true, encoding: .utf8)
        let result = try await EndToEndTests.run(["check", path])
        #expect(result.status == 0, "\(result.stderr)")
        #expect(result.stdout.contains("ok: the pipeline builds"))
    }

    @Test func durationsAndSizesAreWrittenExactly() {
        #expect(PipelineWriter.duration(.seconds(7200)) == "2h")
        #expect(PipelineWriter.duration(.seconds(90)) == "90s")
        #expect(PipelineWriter.duration(.milliseconds(1500)) == "1500ms")
        #expect(PipelineWriter.duration(.nanoseconds(1_500)) == "1.5us")
        #expect(PipelineWriter.duration(.zero) == "0s")
        #expect(PipelineWriter.size(64 * 1024) == "64KiB")
        #expect(PipelineWriter.size(1000) == "1000")
        #expect(PipelineWriter.size(0) == "0")
    }

    /// Random specs (of the values a file can hold) write and read back the same.
    @Test func randomSpecsRoundTrip() throws {
        var random = SeededGenerator(seed: 4)
        let durations: [Duration] = [.nanoseconds(1), .nanoseconds(999), .microseconds(7), .milliseconds(3), .seconds(1),
                                     .milliseconds(1_001), .seconds(61), .seconds(3_600 * 25), .nanoseconds(123_456_789)]
        let texts = ["x", "L 1", "é", "a:b", "#", "'", "\"", "\\", "~", "null", "true", "123", "- x", "{x}", "[y]", "%"]
        for round in 0..<300 {
            var levels: [LevelSpec] = []
            for index in 0..<random.int(1..<6) {
                let kind: LevelSpec.Kind
                switch random.int(0..<4) {
                case 0: kind = .memory(capacity: random.int(0..<(1 << 40)), countLimit: random.chance(0.5) ? random.int(1..<100_000_000) : nil)
                case 1: kind = .disk(path: random.chance(0.5) ? "/tmp/" + random.pick(texts) : nil, capacity: random.int(0..<(1 << 30)))
                case 2: kind = .redis(url: "redis://127.0.0.1:\(random.int(1..<65_535))/" + random.pick(texts),
                                      prefix: random.pick(texts), leases: random.chance(0.5))
                default: kind = .http(baseURL: "https://example.invalid/" + random.pick(["a", "b/c", "x?y=1", "%41", "é"]),
                                      timeout: random.pick(durations))
                }
                var level = LevelSpec(name: "n\(index)" + (random.chance(0.3) ? random.pick(["é", "-x", "_", "::"]) : ""), kind: kind)
                if case .http = kind {} else if random.chance(0.5) { level.ttl = random.pick(durations) }
                if case .memory = kind, random.chance(0.4) { level.sliding = random.pick(durations) }
                if case .memory = kind, random.chance(0.5) { level.policy = random.pick([.lru, .adaptive]) }
                if case .disk = kind, random.chance(0.5) { level.policy = random.pick([.lru, .adaptive]) }
                level.pooled = random.chance(0.3)
                level.capRequests = random.chance(0.3) ? random.int(1..<100_000) : nil
                level.condition = random.chance(0.3) ? "t\(random.int(0..<3))" + random.pick(["", "é", "%", "'"]) : nil
                levels.append(level)
            }
            if random.chance(0.5) {
                levels.append(LevelSpec(name: "origin", kind: .origin(latency: random.pick(durations), jitter: random.pick(durations),
                                                                      failureRate: Double(random.int(0..<1001)) / 1000,
                                                                      valueSize: random.int(0..<SimulatedOrigin.maxValueSize))))
            }
            let spec = PipelineSpec(name: random.pick(texts), levels: levels,
                                    failSafe: random.chance(0.3) ? FailSafeSpec(maxStale: random.pick(durations),
                                                                                softTimeout: random.chance(0.5) ? random.pick(durations) : nil) : nil)
            let text = PipelineWriter.yaml(spec)
            let read = try PipelineFile.parse(text, file: "round\(round).yaml")
            #expect(read.sameConfiguration(as: spec), "round \(round):\n\(text)")
        }
    }
}
