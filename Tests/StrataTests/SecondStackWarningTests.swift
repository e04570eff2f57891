@testable import Strata
import Testing

/// Two stacks alive over one upper level do not order their writes against
/// each other; the second is warned about (``LiveUpperLevels``), looking
/// through wrappers. Stacks built one after another are not.
@Suite struct SecondStackWarningTests {
    @Test func aSecondLiveStackOverOneUpperLevelIsWarnedAbout() {
        let memory = MemoryCacheLevel<String, String>(capacity: 100)
        do {
            let first = memory + FakeLevel<String, String>(name: "a")
            #expect(!LiveUpperLevels.warned(memory))
            let second = memory.instrumented(name: "L1") + FakeLevel<String, String>(name: "b")
            #expect(LiveUpperLevels.warned(memory), "a second stack over the instrumented level was not told apart from a first")
            withExtendedLifetime((first, second)) {}
        }
        #expect(!LiveUpperLevels.warned(memory), "forgotten once its stacks are gone")
    }

    @Test func stacksBuiltOneAfterAnotherAreNotWarnedAbout() {
        let memory = MemoryCacheLevel<String, String>(capacity: 100)
        for _ in 0..<3 {
            let stack = memory + FakeLevel<String, String>(name: "origin")
            withExtendedLifetime(stack) {}
        }
        #expect(!LiveUpperLevels.warned(memory))
        // A longer stack nests its compositions: each level is the upper of one stack only.
        let long = memory + MemoryCacheLevel<String, String>(capacity: 100) + FakeLevel<String, String>(name: "origin")
        #expect(!LiveUpperLevels.warned(memory))
        withExtendedLifetime(long) {}
    }
}
