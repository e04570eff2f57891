import Foundation
import StrataTestSupport
import Testing

/// ``offThePool(_:)``, which keeps a CPU-bound test off the cooperative pool.
@Suite struct OffThePoolTests {
    /// A synchronous body, which never suspends, still runs on the executor's
    /// queue, not on the pool thread that called it.
    @Test func offThePoolRunsEvenASynchronousBodyOnItsOwnThread() async {
        #expect(!OwnThreadExecutor.isCurrent)
        let inside = await offThePool { OwnThreadExecutor.isCurrent }
        #expect(inside, "the body ran on the caller's thread")
        #expect(!OwnThreadExecutor.isCurrent)
    }
}
