import Foundation
#if canImport(FoundationNetworking)
import FoundationNetworking
#endif
import Synchronization

/// Errors of ``NetworkFetcher`` and ``URLRequestFetcher``.
public enum NetworkFetcherError: Error, Sendable, CustomStringConvertible {
    /// The server answered with a status outside 200-299 (and not a miss status).
    case status(code: Int, body: Data, url: URL?)
    /// The response was not HTTP.
    case notHTTP(url: URL?)
    /// The request did not complete (connection refused, timeout, TLS…).
    case transport(url: URL?, code: Int, message: String)
    /// The body is (or was announced) larger than the fetcher's
    /// `maxResponseSize`; the request was cancelled.
    case tooLarge(url: URL?, limit: Int)

    public var description: String {
        switch self {
        case .status(let code, let body, let url):
            let preview = String(decoding: body.prefix(120), as: UTF8.self)
            return "HTTP \(code) from \(url?.absoluteString ?? "?")" + (preview.isEmpty ? "" : ": \(preview)")
        case .notHTTP(let url): return "not an HTTP response from \(url?.absoluteString ?? "?")"
        case .transport(let url, let code, let message): return "request to \(url?.absoluteString ?? "?") failed (\(code)): \(message)"
        case .tooLarge(let url, let limit): return "response from \(url?.absoluteString ?? "?") is larger than \(limit) bytes"
        }
    }

    /// The HTTP status, if the server answered.
    public var statusCode: Int? { if case .status(let code, _, _) = self { code } else { nil } }
}

/// Loads `URLRequest`s with a `URLSession`; shared by both fetchers.
struct HTTPLoader: Sendable {
    let session: URLSession
    let timeout: Duration
    let missStatusCodes: Set<Int>
    let maxResponseSize: Int

    func load(_ original: URLRequest) async throws -> Data? {
        try Task.checkCancellation()
        var adjusted = original
        if adjusted.timeoutInterval == 60 || adjusted.timeoutInterval <= 0 {  // 60 = URLRequest's default
            adjusted.timeoutInterval = Double(timeout.nanoseconds) / 1e9
        }
        // URLSession on Linux counts the timeout in whole seconds, rounded
        // down: 0.6 s was 0, which failed every request that had not
        // answered at once. Rounded up instead.
        let seconds = adjusted.timeoutInterval
        adjusted.timeoutInterval = adjusted.timeoutInterval.rounded(.up)
        let request = adjusted
        let box = Mutex<URLSessionDataTask?>(nil)
        let cancelled = Mutex(false)
        // URLSession's timeout is idle time: a server sending a byte now and
        // then held the request forever. This deadline bounds it as a whole.
        let timedOut = Mutex(false)
        let deadline = DispatchWorkItem {
            timedOut.withLock { $0 = true }
            box.withLock { $0 }?.cancel()
        }
        defer { deadline.cancel() }
        // URLSession has no size limit: a body announced larger than
        // `maxResponseSize` (Content-Length) is cancelled at once, looked at
        // every 20 ms while the request runs, instead of read into memory.
        let tooLarge = Mutex(false)
        let limit = Int64(maxResponseSize)
        let watch = DispatchSource.makeTimerSource(queue: .global())
        watch.schedule(deadline: .now(), repeating: .milliseconds(20), leeway: .milliseconds(5))
        watch.setEventHandler {
            guard let task = box.withLock({ $0 }), task.countOfBytesExpectedToReceive > limit else { return }
            tooLarge.withLock { $0 = true }
            task.cancel()
        }
        defer { watch.cancel() }
        let (data, response): (Data, URLResponse) = try await withTaskCancellationHandler {
            try await withCheckedThrowingContinuation { continuation in
                let task = session.dataTask(with: request) { data, response, error in
                    if let error {
                        let nsError = error as NSError
                        if nsError.domain == NSURLErrorDomain && nsError.code == NSURLErrorCancelled {
                            if tooLarge.withLock({ $0 }) && !cancelled.withLock({ $0 }) {
                                continuation.resume(throwing: NetworkFetcherError.tooLarge(url: request.url, limit: maxResponseSize))
                            } else if timedOut.withLock({ $0 }) && !cancelled.withLock({ $0 }) {
                                continuation.resume(throwing: NetworkFetcherError.transport(
                                    url: request.url, code: NSURLErrorTimedOut,
                                    message: "no complete answer within \(seconds) s"))
                            } else {
                                continuation.resume(throwing: CancellationError())
                            }
                        } else {
                            continuation.resume(throwing: NetworkFetcherError.transport(
                                url: request.url, code: nsError.code,
                                message: (nsError.userInfo[NSLocalizedDescriptionKey] as? String) ?? "\(error)"))
                        }
                        return
                    }
                    guard let response else {
                        continuation.resume(throwing: NetworkFetcherError.notHTTP(url: request.url))
                        return
                    }
                    continuation.resume(returning: (data ?? Data(), response))
                }
                box.withLock { $0 = task }
                task.resume()
                DispatchQueue.global().asyncAfter(deadline: .now() + seconds, execute: deadline)
                watch.resume()
                if cancelled.withLock({ $0 }) { task.cancel() }
            }
        } onCancel: {
            cancelled.withLock { $0 = true }
            box.withLock { $0 }?.cancel()
        }
        guard let http = response as? HTTPURLResponse else { throw NetworkFetcherError.notHTTP(url: request.url) }
        // A body without a Content-Length is only seen whole.
        if data.count > maxResponseSize { throw NetworkFetcherError.tooLarge(url: request.url, limit: maxResponseSize) }
        if missStatusCodes.contains(http.statusCode) { return nil }
        guard (200..<300).contains(http.statusCode) else {
            throw NetworkFetcherError.status(code: http.statusCode, body: data, url: request.url)
        }
        return data
    }
}

/// What an ``HTTPFetcher`` can be keyed by: a `URL` or a whole `URLRequest`.
public protocol HTTPRequestConvertible: Sendable {
    var urlRequest: URLRequest { get }
}

extension URL: HTTPRequestConvertible { public var urlRequest: URLRequest { URLRequest(url: self) } }
extension URLRequest: HTTPRequestConvertible { public var urlRequest: URLRequest { self } }

/// The origin level: fetches over HTTP(S) with `URLSession`, keyed by `URL`
/// (``NetworkFetcher``) or by `URLRequest` (``URLRequestFetcher``: headers,
/// method, body).
///
/// 2xx answers are values; `missStatusCodes` (404 and 410 by default) are
/// misses; other statuses throw ``NetworkFetcherError/status(code:body:url:)``
/// with the body. A body announced larger than `maxResponseSize` (64 MiB by
/// default) is not read and throws ``NetworkFetcherError/tooLarge(url:limit:)``.
/// Cancelling the calling task cancels the HTTP request.
public struct HTTPFetcher<Key: HTTPRequestConvertible>: Fetcher {
    public typealias Value = Data

    let loader: HTTPLoader
    public let name: String

    /// - Parameters:
    ///   - session: the session to use (inject one with your configuration).
    ///   - timeout: per-request timeout, unless a request sets its own: it
    ///     bounds the whole request (a server sending a byte now and then
    ///     fails with ``NetworkFetcherError/transport(url:code:message:)``,
    ///     code `NSURLErrorTimedOut`), not only the time between two reads.
    ///   - maxResponseSize: the largest body accepted, in bytes; a body
    ///     announced larger is not read (``NetworkFetcherError/tooLarge(url:limit:)``).
    public init(name: String = "network", session: URLSession = .shared, timeout: Duration = .seconds(30),
                missStatusCodes: Set<Int> = [404, 410], maxResponseSize: Int = 64 << 20) {
        self.name = name
        loader = HTTPLoader(session: session, timeout: timeout, missStatusCodes: missStatusCodes,
                            maxResponseSize: maxResponseSize)
    }

    /// A fetcher with its own session built from `configuration`.
    public init(name: String = "network", configuration: URLSessionConfiguration, timeout: Duration = .seconds(30),
                maxResponseSize: Int = 64 << 20) {
        self.init(name: name, session: URLSession(configuration: configuration), timeout: timeout,
                  maxResponseSize: maxResponseSize)
    }

    public func getIfPresent(_ key: Key) async throws -> Data? { try await loader.load(key.urlRequest) }
}

/// An ``HTTPFetcher`` keyed by `URL`: `NetworkFetcher()`.
public typealias NetworkFetcher = HTTPFetcher<URL>

/// An ``HTTPFetcher`` keyed by `URLRequest`.
public typealias URLRequestFetcher = HTTPFetcher<URLRequest>
