import Foundation
@testable import StrataExplorer
import Testing

/// Sizes in pipeline files are bounded: a capacity beyond ``Units/maxBytes``
/// would overflow the levels' cost arithmetic, and a `value-size` beyond
/// ``SimulatedOrigin/maxValueSize`` would allocate that much on every get.
@Suite struct PipelineSizeLimitTests {
    func error(_ text: String) -> PipelineFileError? { pipelineFileError(text, file: "big.yaml", mayParse: true) }

    @Test func plainAndSuffixedSizesStopAtTheMaximum() {
        #expect(Units.maxBytes == 1 << 50)
        #expect(Units.parseBytes("1125899906842624") == 1 << 50)
        #expect(Units.parseBytes("1048576GiB") == 1 << 50)
        #expect(Units.parseBytes("1125899906842625") == nil)
        #expect(Units.parseBytes("9223372036854775807") == nil)
        #expect(Units.parseBytes("1048577GiB") == nil)
        #expect(Units.parseBytes("nanKiB") == nil)
        #expect(throws: Units.BytesError.tooLarge(limit: 1 << 50)) { try Units.bytes("9223372036854775807") }
        #expect(throws: Units.BytesError.notASize) { try Units.bytes("lots") }
    }

    @Test func aHugeCapacityIsRefusedWithFileLineAndField() {
        let error = error("levels:\n  - kind: memory\n    capacity: 9223372036854775807\n")
        #expect(error?.line == 3)
        #expect(error?.field == "levels[0].capacity")
        #expect(error?.message == "too large: \"9223372036854775807\" is over the maximum of 1 PiB")
        #expect(error?.description == "big.yaml:3: levels[0].capacity: too large: \"9223372036854775807\" is over the maximum of 1 PiB")
    }

    @Test func aHugeValueSizeIsRefusedWithFileLineAndField() {
        let error = error("levels:\n  - kind: origin\n    latency: 1ms\n    value-size: 1000GB\n")
        #expect(error?.line == 4)
        #expect(error?.field == "levels[0].value-size")
        #expect(error?.message == "too large: \"1000GB\" is over the maximum of 64 MiB")
        #expect(throws: PipelineFileError.self) {
            try PipelineFile.parse("levels:\n  - kind: origin\n    value-size: 67108865\n", file: "big.yaml")
        }
    }

    @Test func theLargestValueSizeIsAccepted() throws {
        let spec = try PipelineFile.parse("levels:\n  - kind: origin\n    value-size: 64MiB\n", file: "ok.yaml")
        guard case .origin(_, _, _, let valueSize) = spec.levels[0].kind else {
            Issue.record("expected an origin level")
            return
        }
        #expect(valueSize == SimulatedOrigin.maxValueSize)
        #expect(SimulatedOrigin.maxValueSize == 64 << 20)
    }
}

/// A spec made in code skips the file's checks; building it checks the same bounds.
@Suite struct PipelineSpecBoundsTests {
    @Test(arguments: [
        LevelSpec.Kind.memory(capacity: Int.max, countLimit: nil), .memory(capacity: -1, countLimit: nil),
        .memory(capacity: 1024, countLimit: -1), .disk(path: nil, capacity: Int.max),
        .origin(latency: .zero, jitter: .zero, failureRate: 0, valueSize: 1 << 40),
        .origin(latency: .zero, jitter: .zero, failureRate: 0, valueSize: -1),
    ])
    func outOfBoundsLevelsAreABuildError(kind: LevelSpec.Kind) {
        let spec = PipelineSpec(name: "code", levels: [LevelSpec(name: "X", kind: kind)])
        let error = #expect(throws: PipelineBuildError.self) { try Pipeline(spec) }
        #expect(error?.level == "X")
    }
}
