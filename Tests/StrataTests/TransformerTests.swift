import Foundation
import Strata
import Testing

@Suite struct TransformerTests {
    let toInt = TwoWayTransformationBox<String, Int>(
        transform: { guard let n = Int($0) else { throw TestError("not a number: \($0)") }; return n },
        inverseTransform: { String($0) }
    )

    @Test func boxesTransformBothWays() async throws {
        #expect(try await toInt.transform("42") == 42)
        #expect(try await toInt.inverseTransform(42) == "42")
        await #expect(throws: TestError("not a number: x")) { try await toInt.transform("x") }
        let double = OneWayTransformationBox<Int, Int> { $0 * 2 }
        #expect(try await double.transform(21) == 42)
    }

    @Test func composeAndInvert() async throws {
        let doubled = TwoWayTransformationBox<Int, Int>(transform: { $0 * 2 }, inverseTransform: { $0 / 2 })
        let composed = toInt.compose(doubled)
        #expect(try await composed.transform("21") == 42)
        #expect(try await composed.inverseTransform(42) == "21")
        let inverted = toInt.invert()
        #expect(try await inverted.transform(7) == "7")
        #expect(try await inverted.inverseTransform("8") == 8)
        let oneWay = OneWayTransformationBox<String, Int> { $0.count }.compose(OneWayTransformationBox<Int, Int> { $0 + 1 })
        #expect(try await oneWay.transform("abc") == 4)
    }

    @Test func conditionedTransformers() async throws {
        let positiveOnly = OneWayTransformationBox<Int, Int> { $0 * 10 }.conditioned { $0 > 0 }
        #expect(try await positiveOnly.transform(2) == 20)
        await #expect(throws: FetchError.conditionNotSatisfied) { try await positiveOnly.transform(-1) }
        let twoWay = toInt.conditioned({ !$0.isEmpty }, inverseCondition: { $0 >= 0 })
        await #expect(throws: FetchError.conditionNotSatisfied) { try await twoWay.transform("") }
        await #expect(throws: FetchError.conditionNotSatisfied) { try await twoWay.inverseTransform(-5) }
        #expect(try await twoWay.inverseTransform(5) == "5")
    }

    @Test func keyAwareBoxesReceiveKeyFirst() async throws {
        let box = ConditionedOneWayTransformationBox<String, Int, String>(conditionalTransformClosure: { key, value in
            "\(key)=\(value)"
        })
        #expect(try await box.conditionalTransform(key: "k", value: 1) == "k=1")
        let twoWay = ConditionedTwoWayTransformationBox<String, Int, String>(
            conditionalTransformClosure: { key, value in "\(key):\(value)" },
            conditionalInverseTransformClosure: { key, value in Int(value.dropFirst(key.count + 1))! }
        )
        #expect(try await twoWay.conditionalInverseTransform(key: "ab", value: "ab:9") == 9)
        #expect(try await twoWay.invert().conditionalTransform(key: "ab", value: "ab:3") == 3)
        let adapted = ConditionedOneWayTransformationBox<String, String, Int>(transformer: toInt)
        #expect(try await adapted.conditionalTransform(key: "ignored", value: "5") == 5)
    }

    @Test func transformKeysAndMapKeys() async throws {
        let memory = MemoryCacheLevel<String, String>(capacity: 1000)
        let byInt = memory.transformKeys(toInt.invert())
        try await byInt.set("seven", forKey: 7)
        #expect(memory.value(forKey: "7") == "seven")
        #expect(try await byInt.get(7) == "seven")
        let byURL = memory.mapKeys { (url: URL) in url.absoluteString }
        try await byURL.set("page", forKey: URL(string: "https://example.invalid/a")!)
        #expect(memory.value(forKey: "https://example.invalid/a") == "page")
    }

    @Test func rejectedKeyFailsOnlyThatRequest() async throws {
        let memory = MemoryCacheLevel<Int, String>(capacity: 1000)
        try await memory.set("one", forKey: 1)
        let byString = memory.transformKeys(toInt)
        do {
            _ = try await byString.get("not-a-number")
            Issue.record("expected a failure")
        } catch let error as FetchError {
            let failure = try #require(error.failures.first)
            #expect(failure.operation == .transformKey)
            #expect(failure.key == "not-a-number")
            #expect(failure.level == "memory")
        }
        #expect(try await byString.get("1") == "one")
    }

    @Test func transformValuesAndMapValues() async throws {
        let memory = MemoryCacheLevel<String, String>(capacity: 1000)
        let ints = memory.transformValues(toInt)
        try await ints.set(12, forKey: "k")
        #expect(memory.value(forKey: "k") == "12")
        #expect(try await ints.get("k") == 12)
        try await memory.set("garbage", forKey: "bad")
        let error = await #expect(throws: FetchError.self) { try await ints.get("bad") }
        #expect(error?.failures.first?.operation == .transformValue)
        #expect(try await ints.getIfPresent("absent") == nil)
        let mapped = memory.mapValues({ $0.count }, inverse: { String(repeating: "x", count: $0) })
        try await mapped.set(3, forKey: "n")
        #expect(memory.value(forKey: "n") == "xxx")
    }

    @Test func fetcherOneWayTransform() async throws {
        let fetcher = BasicFetcher<String, String> { "\($0.count)" }.transformValues(toInt)
        #expect(try await fetcher.get("hello") == 5)
        let lengths = BasicFetcher<String, String> { $0 }.transformValues(OneWayTransformationBox<String, Int> { $0.count })
        #expect(try await lengths.get("abcd") == 4)
    }

    @Test func postProcessingTouchesGetsOnly() async throws {
        let memory = MemoryCacheLevel<String, String>(capacity: 1000)
        let shouting = memory.postProcess(OneWayTransformationBox<String, String> { $0.uppercased() })
        try await shouting.set("quiet", forKey: "k")
        #expect(memory.value(forKey: "k") == "quiet")
        #expect(try await shouting.get("k") == "QUIET")
        let keyed = memory.conditionedPostProcess(
            ConditionedOneWayTransformationBox<String, String, String> { key, value in key == "k" ? value + "!" : value }
        )
        #expect(try await keyed.get("k") == "quiet!")
        let closure = memory.postProcess { $0 + "?" }
        #expect(try await closure.get("k") == "quiet?")
    }

    @Test func conditionedValueTransformationSeesTheKey() async throws {
        let memory = MemoryCacheLevel<String, String>(capacity: 1000)
        let tagged = memory.conditionedValueTransformation(ConditionedTwoWayTransformationBox<String, String, String>(
            conditionalTransformClosure: { key, value in String(value.dropFirst(key.count + 1)) },
            conditionalInverseTransformClosure: { key, value in "\(key):\(value)" }
        ))
        try await tagged.set("v", forKey: "user")
        #expect(memory.value(forKey: "user") == "user:v")
        #expect(try await tagged.get("user") == "v")
    }

    @Test func failingInverseTransformFailsTheSetWithLevelAndKey() async throws {
        let memory = MemoryCacheLevel<String, String>(capacity: 1000)
        let strict = memory.mapValues({ $0 }, inverse: { (value: String) -> String in
            if value.isEmpty { throw TestError("empty") }
            return value
        })
        do {
            try await strict.set("", forKey: "k")
            Issue.record("expected failure")
        } catch let failure as LevelFailure {
            #expect(failure.operation == .inverseTransformValue)
            #expect(failure.key == "k")
        }
        #expect(memory.count == 0)
    }
}
