import Foundation
@testable import StrataExplorer
import Testing

/// The explorer never shows a Redis level's password: not in file errors, not
/// in build errors, not in `strata check`'s tree (all of which reach the
/// terminal, and log files through `--log-file`).
@Suite struct PipelineRedisPasswordTests {
    static func file(url: String) -> String {
        "levels:\n  - name: shared\n    kind: redis\n    url: \"\(url)\"\n"
    }

    @Test func aURLThatIsNotRedisIsQuotedWithoutItsPassword() {
        let error = #expect(throws: PipelineFileError.self) {
            try PipelineFile.parse(Self.file(url: "rediss://:s3cret@cache.internal:6380"), file: "p.yaml")
        }
        #expect(error?.line == 4)
        #expect(error?.message == "expected redis://host:port[/db], got \"rediss://:***@cache.internal:6380\"")
    }

    @Test func theTreeShowsTheURLWithoutItsPassword() throws {
        let spec = try PipelineFile.parse(Self.file(url: "redis://:s3cret@cache.internal:6380/2"), file: "p.yaml")
        #expect(spec.tree.contains("redis://:***@cache.internal:6380/2"), "\(spec.tree)")
        #expect(!spec.tree.contains("s3cret"))
    }

    @Test func aBuildErrorShowsTheURLWithoutItsPassword() throws {
        let spec = try PipelineFile.parse(Self.file(url: "redis://:s3cret@cache.internal:99999"), file: "p.yaml")
        let error = #expect(throws: (any Error).self) { try Pipeline(spec) }
        let text = String(describing: error)
        #expect(!text.contains("s3cret"), "\(text)")
        #expect(text.contains("redis://:***@cache.internal:99999"), "\(text)")
    }
}

/// `leases` on a Redis level of a pipeline file.
@Suite struct PipelineRedisLeasesTests {
    static func file(_ leases: String?) -> String {
        "levels:\n  - name: shared\n    kind: redis\n    url: \"redis://127.0.0.1:6379\"\n"
            + (leases.map { "    leases: \($0)\n" } ?? "")
    }

    @Test func leasesAreOffUnlessTheFileTurnsThemOn() throws {
        let off = try PipelineFile.parse(Self.file(nil), file: "p.yaml").levels[0]
        #expect(off.kind == .redis(url: "redis://127.0.0.1:6379", prefix: "strata:", leases: false))
        let on = try PipelineFile.parse(Self.file("true"), file: "p.yaml").levels[0]
        #expect(on.kind == .redis(url: "redis://127.0.0.1:6379", prefix: "strata:", leases: true))
        #expect(on.summary.contains("leases") && on.details.hasSuffix(", leases"))
    }

    @Test func aLeasesValueThatIsNotABooleanNamesTheFileAndLine() {
        let error = #expect(throws: PipelineFileError.self) {
            try PipelineFile.parse(Self.file("often"), file: "p.yaml")
        }
        #expect(error?.description == "p.yaml:5: levels[0].leases: expected true or false, got \"often\"", "\(String(describing: error))")
    }

    @Test func leasesAreRefusedOnOtherKinds() {
        #expect(throws: PipelineFileError.self) {
            try PipelineFile.parse("levels:\n  - name: L1\n    kind: memory\n    capacity: 1KiB\n    leases: true\n", file: "p.yaml")
        }
    }
}
