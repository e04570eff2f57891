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
    /// The body is (or was announced) over `maxResponseSize`; the request was cancelled.
    case tooLarge(url: URL?, limit: Int)

    /// One line: the status and the start of the body, or what failed, with the URL.
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

/// Loads `URLRequest`s for both fetchers (and the copies of one). Its one
/// `URLSession`'s delegate (``HTTPLoader/Delegate``) gets each chunk as it
/// arrives, so `maxResponseSize` bounds a body without a Content-Length while
/// it is read (a completion handler sees it only whole, and Linux `URLSession`
/// does not update `countOfBytesReceived` for such a task).
///
/// Delegate calls run on the loader's own labelled serial queue, with its own
/// thread (``DelegateQueue``): FoundationNetworking queues one per chunk (up to
/// 16 KiB) without waiting, so calls must be short and have a thread (an
/// OperationQueue's own queue shares the global queues' one or two: with those
/// busy, 1.4 GB of an endless body queued before 1 MiB was counted).
final class HTTPLoader: Sendable {
    let session: URLSession
    let delegate: Delegate
    let timeout: Duration
    let missStatusCodes: Set<Int>
    let maxResponseSize: Int

    /// A session made from `configuration` (copied), with this loader's delegate.
    init(configuration: URLSessionConfiguration, timeout: Duration, missStatusCodes: Set<Int>, maxResponseSize: Int) {
        delegate = Delegate()
        session = URLSession(configuration: configuration, delegate: delegate, delegateQueue: DelegateQueue())
        self.timeout = timeout
        self.missStatusCodes = missStatusCodes
        self.maxResponseSize = maxResponseSize
    }

    /// The session keeps its delegate until invalidated; requests (each holds the loader) are done.
    deinit { session.finishTasksAndInvalidate() }

    func load(_ original: URLRequest) async throws -> Data? {
        try Task.checkCancellation()
        var adjusted = original
        if adjusted.timeoutInterval == 60 || adjusted.timeoutInterval <= 0 {  // 60 = URLRequest's default
            adjusted.timeoutInterval = Double(timeout.nanoseconds) / 1e9
        }
        // Linux URLSession rounds the timeout down to whole seconds (0.6 s
        // became 0, failing any request not answered at once): round up.
        let seconds = adjusted.timeoutInterval
        adjusted.timeoutInterval = adjusted.timeoutInterval.rounded(.up)
        let request = adjusted
        // A HEAD answer's Content-Length announces a body that is not sent.
        let transfer = Transfer(limit: maxResponseSize, checksLength: request.httpMethod?.uppercased() != "HEAD")
        // URLSession's timeout is idle time: a server sending a byte now and
        // then held the request forever. This deadline bounds it as a whole.
        let deadline = DispatchWorkItem { transfer.stop(.timedOut)?.cancel() }  // runs on cancelQueue
        defer { deadline.cancel() }
        let outcome = await withTaskCancellationHandler {
            await withCheckedContinuation { continuation in
                let task = session.dataTask(with: request)
                delegate.transfers.withLock { $0[task.taskIdentifier] = transfer }
                transfer.start(task, continuation)  // cancels the task if the caller already cancelled
                Self.cancelQueue.asyncAfter(deadline: .now() + seconds, execute: deadline)
            }
        } onCancel: {
            if let task = transfer.stop(.cancelled) { Self.cancelQueue.async { task.cancel() } }
        }
        let data: Data, response: URLResponse?
        switch outcome {
        case .completed(let body, let answer, nil):
            data = body
            response = answer
        case .completed(_, _, let error?):
            let nsError = error as NSError
            throw NetworkFetcherError.transport(
                url: request.url, code: nsError.code,
                message: (nsError.userInfo[NSLocalizedDescriptionKey] as? String) ?? "\(error)")
        case .stopped(.cancelled): throw CancellationError()
        case .stopped(.tooLarge): throw NetworkFetcherError.tooLarge(url: request.url, limit: maxResponseSize)
        case .stopped(.timedOut):
            throw NetworkFetcherError.transport(url: request.url, code: NSURLErrorTimedOut,
                                                message: "no complete answer within \(seconds) s")
        }
        guard let http = response as? HTTPURLResponse else { throw NetworkFetcherError.notHTTP(url: request.url) }
        if missStatusCodes.contains(http.statusCode) { return nil }
        guard (200..<300).contains(http.statusCode) else {
            throw NetworkFetcherError.status(code: http.statusCode, body: data, url: request.url)
        }
        return data
    }

    /// Where tasks are cancelled (and deadlines run): `cancel()` waits for the
    /// session's work queue (on Linux one serial queue for all sessions), which
    /// a fast server keeps busy for seconds (measured): so neither the delegate's
    /// queue (chunks would pile up) nor the cooperative pool; its own thread.
    static let cancelQueue = DispatchQueue(label: "strata.network.cancel")

    /// Why the loader cancelled a request, rather than the server ending it.
    enum StopReason: Sendable { case cancelled, tooLarge, timedOut }

    enum Outcome: Sendable {
        /// The task completed: the body read, the response (if any), the error (if any).
        case completed(Data, URLResponse?, (any Error)?)
        case stopped(StopReason)
    }

    /// One request: the body read so far, and why the loader cancelled it, if it did.
    final class Transfer: Sendable {
        struct State {
            var task: URLSessionDataTask?
            var continuation: CheckedContinuation<Outcome, Never>?
            var body = Data()
            /// The calling task was cancelled.
            var cancelled = false
            /// The body is (or was announced) past the limit; it is no longer kept.
            var tooLarge = false
            /// The whole-request deadline passed.
            var timedOut = false
        }

        let state = Mutex(State())
        let limit: Int
        let checksLength: Bool

        init(limit: Int, checksLength: Bool) {
            self.limit = limit
            self.checksLength = checksLength
        }

        /// Runs `task`; `continuation` is resumed once, by `complete`.
        func start(_ task: URLSessionDataTask, _ continuation: CheckedContinuation<Outcome, Never>) {
            state.withLock { $0.continuation = continuation }
            task.resume()
            // Known to `stop` only once resumed: a stop before this cancels it here.
            let stopped = state.withLock { state in
                state.task = task
                return state.cancelled || state.tooLarge || state.timedOut
            }
            if stopped { HTTPLoader.cancelQueue.async { task.cancel() } }
        }

        /// Records `reason`; returns the task to cancel (nil if it has not
        /// been started yet: `start` cancels it then), on ``cancelQueue``.
        func stop(_ reason: StopReason) -> URLSessionDataTask? {
            state.withLock { state -> URLSessionDataTask? in
                switch reason {
                case .cancelled: state.cancelled = true
                case .timedOut: state.timedOut = true
                case .tooLarge:
                    state.tooLarge = true
                    state.body = Data()
                }
                return state.task
            }
        }

        /// On the delegate's queue: cancels if Content-Length is past the limit, else reserves it.
        func received(_ response: URLResponse) {
            let length = response.expectedContentLength  // -1 if unknown
            guard checksLength else { return }
            if length > Int64(limit) {
                cancelTooLarge()
            } else if length > 0 {
                state.withLock { state in
                    if !state.tooLarge && state.body.isEmpty { state.body.reserveCapacity(Int(length)) }
                }
            }
        }

        /// On the delegate's queue: keeps `data`, or cancels once past the limit.
        func received(_ data: Data) {
            let over = state.withLock { state -> Bool in
                guard !state.tooLarge else { return false }  // already cancelled for it: nothing more is kept
                if state.body.count + data.count > limit { return true }
                state.body.append(data)
                return false
            }
            if over { cancelTooLarge() }
        }

        func cancelTooLarge() {
            if let task = stop(.tooLarge) { HTTPLoader.cancelQueue.async { task.cancel() } }
        }

        /// The task's end; resumes the caller.
        func complete(response: URLResponse?, error: (any Error)?) {
            let (continuation, outcome) = state.withLock { state -> (CheckedContinuation<Outcome, Never>?, Outcome) in
                let continuation = state.continuation
                state.continuation = nil
                state.task = nil
                let body = state.body
                state.body = Data()
                let nsError = error.map { $0 as NSError }
                let cancelledTask = nsError.map { $0.domain == NSURLErrorDomain && $0.code == NSURLErrorCancelled } ?? false
                // The caller's cancellation wins; an over-limit body is never a value, even complete.
                if state.tooLarge { return (continuation, .stopped(state.cancelled ? .cancelled : .tooLarge)) }
                if cancelledTask {
                    return (continuation, .stopped(state.timedOut && !state.cancelled ? .timedOut : .cancelled))
                }
                return (continuation, .completed(body, response, error))
            }
            continuation?.resume(returning: outcome)
        }
    }

    /// The session's delegate: hands each task's events to its ``Transfer``.
    final class Delegate: NSObject, URLSessionDataDelegate, Sendable {
        /// The requests under way, by task identifier (unique in a session).
        let transfers = Mutex<[Int: Transfer]>([:])

        func transfer(_ task: URLSessionTask) -> Transfer? { transfers.withLock { $0[task.taskIdentifier] } }

        func urlSession(_ session: URLSession, dataTask: URLSessionDataTask, didReceive response: URLResponse,
                        completionHandler: @escaping @Sendable (URLSession.ResponseDisposition) -> Void) {
            transfer(dataTask)?.received(response)
            completionHandler(.allow)
        }

        func urlSession(_ session: URLSession, dataTask: URLSessionDataTask, didReceive data: Data) {
            transfer(dataTask)?.received(data)
        }

        func urlSession(_ session: URLSession, task: URLSessionTask, didCompleteWithError error: (any Error)?) {
            let transfer = transfers.withLock { $0.removeValue(forKey: task.taskIdentifier) }
            transfer?.complete(response: task.response, error: error)
        }
    }
}

/// The `OperationQueue` an ``HTTPLoader``'s session calls its delegate on: each
/// block (`addOperation(_:)`) goes straight to `queue` (its underlying queue),
/// in order. A plain one made each an operation, a few µs per 16 KiB read
/// (loopback, 1 MiB bodies: 1.7-2.1 ms a fetch vs 1.4-1.5 ms with a completion
/// handler; with this queue medians 1.67 vs 1.55 ms, 16 MiB bodies 8% faster).
final class DelegateQueue: OperationQueue, @unchecked Sendable {
    // Sendable: `queue` is thread-safe and never reassigned, as is
    // OperationQueue. Held here: `underlyingQueue` does not retain it.
    let queue = DispatchQueue(label: "strata.network.delegate")

    override init() {
        super.init()
        maxConcurrentOperationCount = 1
        underlyingQueue = queue
    }

    override func addOperation(_ block: @Sendable @escaping () -> Void) { queue.async(execute: block) }
}

/// What an ``HTTPFetcher`` can be keyed by: a `URL` or a whole `URLRequest`.
public protocol HTTPRequestConvertible: Sendable {
    /// The request to send for this key.
    var urlRequest: URLRequest { get }
}

extension URL: HTTPRequestConvertible {
    /// A GET of this URL with the session's defaults.
    public var urlRequest: URLRequest { URLRequest(url: self) }
}

extension URLRequest: HTTPRequestConvertible {
    /// The request itself: its method, headers and body are sent as they are.
    public var urlRequest: URLRequest { self }
}

/// The origin level: fetches over HTTP(S) with `URLSession`, keyed by `URL`
/// (``NetworkFetcher``) or `URLRequest` (``URLRequestFetcher``: headers, method, body).
///
/// 2xx answers are values; `missStatusCodes` (404, 410 by default) are misses;
/// other statuses throw ``NetworkFetcherError/status(code:body:url:)`` with the
/// body. A body over `maxResponseSize` (64 MiB by default) is cancelled (at
/// once if its Content-Length says so): ``NetworkFetcherError/tooLarge(url:limit:)``.
/// Cancelling the calling task cancels the request. A fetcher and its copies
/// share one `URLSession` of their own, made from the configuration given.
public struct HTTPFetcher<Key: HTTPRequestConvertible>: Fetcher {
    /// The body of a 2xx answer.
    public typealias Value = Data

    let loader: HTTPLoader
    public let name: String

    /// A fetcher whose session is made from `session`'s configuration.
    ///
    /// - Parameters:
    ///   - name: the level's name in errors, logs and statistics.
    ///   - session: its `configuration` (cookies, cache, headers, protocol
    ///     classes…) makes the fetcher's own session; its delegate is not called.
    ///   - timeout: per request, unless the request sets its own; it bounds the
    ///     whole request, not only idle time (a trickling server fails with
    ///     ``NetworkFetcherError/transport(url:code:message:)``, `NSURLErrorTimedOut`).
    ///   - missStatusCodes: the statuses that are a miss (`nil`), not a failure.
    ///   - maxResponseSize: the largest body accepted, in bytes (see above).
    public init(name: String = "network", session: URLSession = .shared, timeout: Duration = .seconds(30),
                missStatusCodes: Set<Int> = [404, 410], maxResponseSize: Int = 64 << 20) {
        self.name = name
        loader = HTTPLoader(configuration: session.configuration, timeout: timeout, missStatusCodes: missStatusCodes,
                            maxResponseSize: maxResponseSize)
    }

    /// A fetcher whose session is made from `configuration`.
    public init(name: String = "network", configuration: URLSessionConfiguration, timeout: Duration = .seconds(30),
                maxResponseSize: Int = 64 << 20) {
        self.name = name
        loader = HTTPLoader(configuration: configuration, timeout: timeout, missStatusCodes: [404, 410],
                            maxResponseSize: maxResponseSize)
    }

    public func getIfPresent(_ key: Key) async throws -> Data? { try await loader.load(key.urlRequest) }
}

/// An ``HTTPFetcher`` keyed by `URL`: `NetworkFetcher()`.
public typealias NetworkFetcher = HTTPFetcher<URL>

/// An ``HTTPFetcher`` keyed by `URLRequest`.
public typealias URLRequestFetcher = HTTPFetcher<URLRequest>
