import Foundation
#if canImport(FoundationNetworking)
import FoundationNetworking
#endif
import Strata
import StrataTestSupport
import Synchronization
import Testing

@Suite(.serialized) struct NetworkFetcherTests {
    @Test func fetchesMissesAndTypedStatusErrors() async throws {
        let server = try await OriginServer()
        let fetcher = NetworkFetcher()
        do {
            #expect(try await fetcher.get(server.url("/value/a")) == Data("value:a".utf8))
            #expect(try await fetcher.getIfPresent(server.url("/status/404")) == nil, "404 is a miss")
            await #expect(throws: FetchError.valueNotInCache) { try await fetcher.get(server.url("/status/410")) }
            do {
                _ = try await fetcher.get(server.url("/status/503"))
                Issue.record("expected a status error")
            } catch let fetch as FetchError {
                let error = try #require(fetch.cause(as: NetworkFetcherError.self))
                #expect(error.statusCode == 503)
                guard case .status(_, let body, let url) = error else { Issue.record("\(error)"); return }
                #expect(body == Data("status 503".utf8))
                #expect(url == server.url("/status/503"))
            }
        }
        await server.stop()
    }

    @Test func refusedConnectionIsATransportError() async throws {
        let server = try await OriginServer()
        let dead = server.url("/value/x")
        await server.stop()
        do {
            _ = try await NetworkFetcher(timeout: .seconds(5)).get(dead)
            Issue.record("expected a transport error")
        } catch let fetch as FetchError {
            guard case .transport? = fetch.cause(as: NetworkFetcherError.self) else { Issue.record("\(fetch)"); return }
        }
    }

    @Test func timeoutIsATransportError() async throws {
        let server = try await OriginServer()
        let start = ContinuousClock.now
        let error = await #expect(throws: FetchError.self) {
            try await NetworkFetcher(timeout: .milliseconds(300)).get(server.url("/slow/3000/t"))
        }
        #expect(error?.cause(as: NetworkFetcherError.self) != nil)
        #expect(ContinuousClock.now - start < .seconds(2.5))
        await server.stop()
    }

    @Test func aSubSecondTimeoutWaitsThatLong() async throws {
        let server = try await OriginServer()
        let fetcher = NetworkFetcher(timeout: .milliseconds(600))
        #expect(try await fetcher.get(server.url("/slow/150/quick")) == Data("value:quick".utf8))
        await server.stop()
    }

    @Test func cancellingTheTaskCancelsTheRequest() async throws {
        let server = try await OriginServer()
        let fetcher = NetworkFetcher()
        let task = Task { try await fetcher.get(server.url("/slow/2000/c")) }
        // Wait until the server has the request, then cancel.
        var attempts = 0
        while try await server.stats().counts["/slow/2000/c"] == nil, attempts < 200 {
            attempts += 1
            try await Task.sleep(for: .milliseconds(10))
        }
        let start = ContinuousClock.now
        task.cancel()
        await #expect(throws: CancellationError.self) { try await task.value }
        #expect(ContinuousClock.now - start < .seconds(1), "did not wait for the slow answer")
        await server.stop()
    }

    @Test func urlRequestKeysCarryHeaders() async throws {
        let server = try await OriginServer()
        var request = URLRequest(url: server.url("/echo-header"))
        request.setValue("hello", forHTTPHeaderField: "X-Strata-Test")
        #expect(try await URLRequestFetcher().get(request) == Data("hello".utf8))
        await server.stop()
    }

    @Test func pooledNetworkOriginBehindMemoryAsksTheServerOnce() async throws {
        let server = try await OriginServer()
        let memory = MemoryCacheLevel<URL, Data>(capacity: 1 << 20)
        let cache = memory + NetworkFetcher().pooled()
        let url = server.url("/slow/200/shared")
        try await withThrowingTaskGroup(of: Data.self) { group in
            for _ in 0..<50 { group.addTask { try await cache.get(url) } }
            for try await value in group { #expect(value == Data("value:shared".utf8)) }
        }
        #expect(try await server.stats().counts["/slow/200/shared"] == 1)
        await cache.waitForPendingWrites()
        #expect(memory.value(forKey: url) == Data("value:shared".utf8))
        await server.stop()
    }
}
