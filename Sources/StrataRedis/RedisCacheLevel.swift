import Foundation
import Strata
import Synchronization

/// A shared level on Redis: keys live under `prefix`, values go through a
/// `CacheCodec` (the disk level's codecs), with an optional TTL per level
/// or per set.
///
/// - The initialiser does not connect; a malformed URL throws
///   ``RedisError/invalidURL(_:)``. Connection problems surface per request as
///   ``RedisError``, so an application starts while Redis is down, and in a
///   composed cache a Redis outage makes gets fall through to the next level.
/// - Expiry travels with the value: ``entry(forKey:)`` is `GET` and `PTTL` in
///   one round trip, so a level above back-fills with the Redis key's
///   remaining time. ``entries(forKeys:maxConcurrency:)`` (and so
///   `batchGetSome` and batches through compositions) is one `MGET` per 512
///   keys, with their `PTTL`s in the same round trip.
/// - `clear()` deletes only this prefix (`SCAN MATCH prefix*` + `UNLINK`),
///   never `FLUSHDB`.
/// - A value that does not decode is a miss, counted (``decodeFailures``), and
///   left for whoever wrote it.
/// - Keys and prefixes are binary-safe (spaces, newlines, any bytes).
/// - The Redis key is `prefix + key` (``RedisKeyLayout/natural``, what other
///   clients see), and everything under the prefix is the level's. An empty
///   prefix throws ``RedisError/invalidPrefix(_:)``; a prefix not ending in
///   `:` gets one (`app` is stored as `app:`); a prefix overlapping another
///   live level's on the same server throws. ``RedisKeyLayout/escaped``
///   stores `%` and `:` of keys as `%25` and `%3A` instead.
/// - **Keeps the levels above coherent** (`subscribe(_:)`,
///   on unless `invalidatesLevelsAbove` is `false`): a change to one of its
///   keys in Redis, by any client, drops that key from every level above it
///   in every composition that holds it.
/// - **Leases** (`leases: true`, off by default): a miss leaves a lease in
///   the key, so that a writer that is not Strata and deletes the key after
///   changing the origin (`DEL`, cache-aside) ends it, and the back-fill of
///   the origin's older answer is declined (see `RedisLease`). Every
///   process on the prefix must use them: a reader without leases would read
///   a lease as a value (with the `.data` codec) or as a miss.
public final class RedisCacheLevel<Key: CacheKeyConvertible, Value: Sendable>: ExpirableCacheLevel {
    /// The connections commands go through (this level's own, or shared).
    public let client: RedisClient
    /// The prefix as stored: the one given, with a `:` appended unless it ends in one.
    public let prefix: [UInt8]
    /// How keys are named after the prefix.
    public let keyLayout: RedisKeyLayout
    /// Whether ``shutdown()`` closes the client (made by this level, not shared).
    let ownsClient: Bool
    /// This level's claim on its prefix (natural layout), given up when it goes.
    private let prefixClaim: RedisPrefixClaim?
    /// How values become the bytes stored in Redis.
    public let codec: CacheCodec<Value>
    /// The level's name in errors, logs and statistics (`redis` by default).
    public let name: String
    /// This machine's wall clock, which `PTTL`s are turned into deadlines on.
    public let clock: any CacheClock = SystemClock()
    /// Whether this level reports changes made in Redis to the levels above it.
    public let invalidatesLevelsAbove: Bool
    let defaultTTL: Duration?
    private let decodeFailureCount = Atomic<Int>(0)
    /// Redis keys last read with a value that did not decode.
    private let undecodable = Mutex<Set<[UInt8]>>([])
    let listeners = InvalidationListeners<Key>()
    let invalidationCounts = RedisInvalidationCounts()
    /// The tracking connection; `nil` when `invalidatesLevelsAbove` is false or on a cluster.
    let subscriber: RedisInvalidationSubscriber?
    /// On a cluster, a tracking connection per master; `nil` otherwise.
    let clusterInvalidation: RedisClusterInvalidation?
    /// Writes accepted while Redis was unreachable, to replay (`outageBacklog`; ``RedisOutageBacklog``).
    let backlog: RedisOutageBacklog<Key, Value>?
    /// Back-fills awaiting Redis's report of their own write (`RedisScriptEchoes`).
    let echoes = RedisScriptEchoes()
    /// This level's rate-limited warnings.
    let warnings = RedisWarnings()
    /// What reads that missed left for their back-fills: the server's time
    /// and, with leases, the lease (``RedisMissBook``).
    let missBook = RedisMissBook()
    /// Whether a miss leaves a lease in the key (see `RedisLease`).
    public let leases: Bool

    /// Keys per `MGET` in ``entries(forKeys:maxConcurrency:)``.
    static var batchChunkSize: Int { 512 }

    /// A level on a client of its own, made from `url`: ``shutdown()`` closes it.
    ///
    /// - Parameters:
    ///   - invalidatesLevelsAbove: when a composition puts levels above this
    ///     one, keep them coherent with Redis through a dedicated RESP3
    ///     connection with `CLIENT TRACKING` (see `subscribe(_:)`).
    ///   - leases: a miss leaves a lease in the key, which a back-fill must
    ///     find there (see `RedisLease`): for writers that are not
    ///     Strata and delete keys. Every process on the prefix must agree.
    ///   - keyLayout: how keys are named after the prefix (``RedisKeyLayout``).
    ///   - connections: the pool's size.
    ///   - connectTimeout: how long a connect may take.
    ///   - outageBacklog: writes (newest per key) kept while Redis cannot be
    ///     reached, and replayed once it can, instead of failing; 0: off
    ///     (see ``writesAwaitingReplay``).
    ///   - url: `redis://[user:password@]host[:port][/db]`, or `rediss://` for TLS.
    ///   - prefix: the level's keys are `prefix + key` (a `:` is appended unless it ends in one).
    ///   - codec: how values become bytes in Redis.
    ///   - defaultTTL: how long a set keeps its value when it gives no deadline (`nil`: until removed).
    ///   - commandTimeout: how long a command may wait for its reply.
    ///   - name: the level's name in errors, logs and statistics.
    public convenience init(url: String, prefix: String, codec: CacheCodec<Value>, defaultTTL: Duration? = nil,
                            connections: Int = 2, commandTimeout: Duration = .seconds(2), connectTimeout: Duration = .seconds(1),
                            name: String = "redis", invalidatesLevelsAbove: Bool = true, leases: Bool = false,
                            keyLayout: RedisKeyLayout = .natural, outageBacklog: Int = 0) throws {
        let configuration = try RedisConfiguration(url: url, connections: connections, commandTimeout: commandTimeout,
                                                   connectTimeout: connectTimeout)
        try self.init(client: RedisClient(configuration: configuration), ownsClient: true, prefix: prefix, codec: codec,
                      defaultTTL: defaultTTL, name: name, invalidatesLevelsAbove: invalidatesLevelsAbove, leases: leases,
                      keyLayout: keyLayout, outageBacklog: outageBacklog)
    }

    /// A level on its own client, from a configuration (an ACL user, TLS
    /// settings, anything a URL does not carry): ``shutdown()`` closes the client.
    public convenience init(configuration: RedisConfiguration, prefix: String, codec: CacheCodec<Value>,
                            defaultTTL: Duration? = nil, name: String = "redis", invalidatesLevelsAbove: Bool = true,
                            leases: Bool = false, keyLayout: RedisKeyLayout = .natural, outageBacklog: Int = 0) throws {
        try self.init(client: RedisClient(configuration: configuration), ownsClient: true, prefix: prefix, codec: codec,
                      defaultTTL: defaultTTL, name: name, invalidatesLevelsAbove: invalidatesLevelsAbove, leases: leases,
                      keyLayout: keyLayout, outageBacklog: outageBacklog)
    }

    /// A level on a Redis Cluster, seeded with some of its nodes' URLs
    /// (`redis://host:port`; the others are found): each key goes to the
    /// master serving its slot, batch reads are split by slot, `clear()`
    /// scans every master, and each master reports changes to the levels
    /// above. See docs/redis.md, "Redis Cluster", for what differs from
    /// one server. ``shutdown()`` closes the cluster client.
    public convenience init(cluster urls: [String], prefix: String, codec: CacheCodec<Value>, defaultTTL: Duration? = nil,
                            connections: Int = 2, commandTimeout: Duration = .seconds(2), connectTimeout: Duration = .seconds(1),
                            name: String = "redis", invalidatesLevelsAbove: Bool = true, leases: Bool = false,
                            keyLayout: RedisKeyLayout = .natural, outageBacklog: Int = 0) throws {
        let client = try RedisClient(cluster: urls, connections: connections, commandTimeout: commandTimeout,
                                     connectTimeout: connectTimeout)
        try self.init(client: client, ownsClient: true, prefix: prefix, codec: codec, defaultTTL: defaultTTL, name: name,
                      invalidatesLevelsAbove: invalidatesLevelsAbove, leases: leases, keyLayout: keyLayout,
                      outageBacklog: outageBacklog)
    }

    /// A level on a client shared with other levels (one pool for many
    /// prefixes): ``shutdown()`` of the level leaves the client open; shut
    /// the client down yourself once every level on it is done.
    public convenience init(client: RedisClient, prefix: String, codec: CacheCodec<Value>, defaultTTL: Duration? = nil,
                            name: String = "redis", invalidatesLevelsAbove: Bool = true, leases: Bool = false,
                            keyLayout: RedisKeyLayout = .natural, outageBacklog: Int = 0) throws {
        try self.init(client: client, ownsClient: false, prefix: prefix, codec: codec, defaultTTL: defaultTTL, name: name,
                      invalidatesLevelsAbove: invalidatesLevelsAbove, leases: leases, keyLayout: keyLayout,
                      outageBacklog: outageBacklog)
    }

    private init(client: RedisClient, ownsClient: Bool, prefix: String, codec: CacheCodec<Value>, defaultTTL: Duration?,
                 name: String, invalidatesLevelsAbove: Bool, leases: Bool, keyLayout: RedisKeyLayout, outageBacklog: Int) throws {
        let configuration = client.configuration
        let prefix = try RedisKeyLayout.normalizedPrefix(prefix)
        self.defaultTTL = try ExpiryError.checked(defaultTTL, role: "defaultTTL")
        self.keyLayout = keyLayout
        self.ownsClient = ownsClient
        prefixClaim = keyLayout == .natural
            ? try RedisPrefixClaim(server: "\(configuration.host):\(configuration.port)/\(configuration.database)", prefix: prefix) : nil
        self.prefix = prefix
        self.client = client
        self.codec = codec
        self.name = name
        self.invalidatesLevelsAbove = invalidatesLevelsAbove
        self.leases = leases
        backlog = outageBacklog > 0 ? RedisOutageBacklog(capacity: outageBacklog) : nil
        if invalidatesLevelsAbove {
            let listeners = self.listeners, counts = self.invalidationCounts, echoes = self.echoes
            let decodeKey = Self.keyDecoder()
            let handler: RedisInvalidationSubscriber.Handler = { invalidation in
                switch invalidation {
                case .all:
                    counts.flushed()
                    await listeners.publish(.all)
                case .contactLost:
                    counts.flushed()
                    await listeners.publish(.contactLost)
                case .key(let name):
                    guard let bytes = keyLayout.keyBytes(name, prefix: prefix) else { return }  // another level's key
                    if let written = echoes.take(name), await Self.holds(client, name, oneOf: written) { return }
                    if let key = decodeKey(bytes) {
                        counts.received()
                        await listeners.publish(.key(key))
                    } else {
                        counts.flushed()  // a key this level cannot name: drop everything above
                        await listeners.publish(.all)
                    }
                }
            }
            if let cluster = client.cluster {
                subscriber = nil
                clusterInvalidation = RedisClusterInvalidation(router: cluster, group: client.group, prefix: prefix, handler: handler)
            } else {
                subscriber = RedisInvalidationSubscriber(configuration: configuration, group: client.group, prefix: prefix, handler: handler)
                clusterInvalidation = nil
            }
        } else {
            subscriber = nil
            clusterInvalidation = nil
        }
    }

    /// Whether `name` holds exactly one of `values` now (`nil`: absent; a
    /// failed check: no).
    static func holds(_ client: RedisClient, _ name: [UInt8], oneOf values: [[UInt8]?]) async -> Bool {
        guard case .bulkString(let held) = try? await client.send([RedisCommandName.get, name]) else { return false }
        guard let held else { return values.contains { $0 == nil } }
        return values.contains { $0.map { held.readableBytesView.elementsEqual($0) } ?? false }
    }

    /// A level dropped without ``shutdown()``: stops the invalidation
    /// connection here (its loop holds the subscriber, not the level, so it
    /// ends and lets go); the pooled connections close in the client's
    /// deinit, once nothing else holds the client.
    deinit {
        subscriber?.stopSoon()
        clusterInvalidation?.stopSoon()
    }

    /// Before every read and write: waits for the invalidation connection's
    /// first attempt to subscribe if it is under way (at most 250 ms; see
    /// `RedisInvalidationSubscriber`), then notes the activity.
    func beginOperation() async {
        guard let subscriber else {
            await clusterInvalidation?.beginOperation()
            return
        }
        await subscriber.awaitFirstAttempt()
        subscriber.noteActivity()
    }

    /// The connection for this level's writes: while subscribed, the
    /// tracking connection, which tracks with `NOLOOP`, so Redis does not
    /// report the write back to this process (``reporting(_:partial:_:)`` tells
    /// the compositions that did not make it); otherwise a pooled one.
    func writeConnection() async throws -> RedisConnection {
        if let connection = subscriber?.writeConnection { return connection }
        return try await client.connection()
    }

    /// Sends a write on the key `name` (see ``writeTarget(for:)``); a server error throws.
    func sendWrite(_ arguments: [[UInt8]], key name: [UInt8]) async throws -> RESPValue {
        try RedisClient.checked(await Self.sendWrite([arguments], on: writeTarget(for: name))[0])
    }

    /// ``sendWrite(_:on:)`` of the commands `build` makes for the server
    /// that runs them (see ``RedisWriteTarget/send(building:)``).
    static func sendWrite(building build: (RedisClient) async throws -> [[[UInt8]]], on target: RedisWriteTarget) async throws -> [RESPValue] {
        try Task.checkCancellation()
        return try await target.send(building: build)
    }

    /// Sends a write's commands and waits for their replies, even if the
    /// caller is cancelled meanwhile (one cancelled before sends nothing):
    /// Redis runs a command once it is sent, and the level's report of the
    /// write (``reporting(_:partial:_:)``) must not reach the other compositions
    /// before Redis has run it. They would read the old value again and keep
    /// it, and `NOLOOP` keeps Redis from reporting the write when it lands.
    static func sendWrite(_ commands: [[[UInt8]]], on target: RedisWriteTarget) async throws -> [RESPValue] {
        try Task.checkCancellation()
        return try await target.send(commands)
    }

    /// Runs one of this level's writes, then tells the listeners of this
    /// level in this process of it, which Redis does not report back (see
    /// ``writeConnection()``). A write that succeeded (or a declined
    /// back-fill) is reported with its ``CacheWriteOrigin``: the composition
    /// that made it skips the report, others drop the key. A write Redis
    /// refused, or one that failed here (a value that does not encode), is
    /// reported to every listener, the writer's compositions included: it
    /// may have changed Redis all the same (a set that fails deletes the old
    /// value; a composition removes it after), and what they hold above is
    /// then what Redis does not.
    ///
    /// A write that did not get an answer is not reported: either nothing
    /// was sent (no connection, cancelled before sending), or the connection
    /// it went on is gone, and Redis reports it back (a pooled connection:
    /// not the tracking one), or the loss of the tracking connection is
    /// reported as `.all` (and again once it subscribes, if the level was
    /// used meanwhile). So during an outage the writer keeps what it wrote.
    /// Unless `partial`: a write of several commands (a clear), whose earlier
    /// ones were answered, is reported with its origin all the same.
    func reporting<T>(_ invalidation: CacheInvalidation<Key>, partial: Bool = false,
                      _ write: () async throws -> T) async throws -> T {
        do {
            let result = try await write()
            reportOwnWrite(invalidation, origin: CacheContext.writeOrigin)
            return result
        } catch is BackfillDeclined {
            reportOwnWrite(invalidation, origin: CacheContext.writeOrigin)
            throw BackfillDeclined()
        } catch {
            switch error {
            case is CancellationError, RedisError.connectionFailed, RedisError.authenticationFailed, RedisError.tlsFailed,
                 RedisError.unavailable, RedisError.connectionClosed, RedisError.timeout, RedisError.invalidReply:
                if partial { reportOwnWrite(invalidation, origin: CacheContext.writeOrigin) }
            default:
                reportOwnWrite(invalidation, origin: CacheWriteOrigin())
            }
            throw error
        }
    }

    /// Tells the listeners of this level in this process of its own write
    /// (see ``reporting(_:partial:_:)``).
    func reportOwnWrite(_ invalidation: CacheInvalidation<Key>, origin: CacheWriteOrigin) {
        if subscriber != nil || clusterInvalidation != nil { listeners.reportLocalWrite(invalidation, origin: origin) }
    }

    /// Values that did not decode with this level's codec.
    public var decodeFailures: Int { decodeFailureCount.load(ordering: .relaxed) }

    func redisKey(_ key: Key) -> [UInt8] { keyLayout.name(of: key.cacheKeyBytes, prefix: prefix) }

    /// Whether `name` is one of this level's keys, not one of a level whose
    /// prefix extends this one (`app:x:` under `app:`).
    func ownsKey(_ name: [UInt8]) -> Bool { keyLayout.owns(name, prefix: prefix) }

    /// The value of `name` in `reply`. One that does not decode (another
    /// version's format) reads as a miss, and the key is remembered: a
    /// back-fill then leaves it in Redis (see ``set(_:forKey:expiresAt:)``).
    func decode(_ reply: RESPValue, name: [UInt8]) throws -> Value? {
        switch reply {
        case .bulkString(nil): return nil
        case .bulkString(let buffer?):
            if leases && RedisLease.isLease(buffer.readableBytesView) { return nil }
            do { return try codec.decode(Data(buffer.readableBytesView)) } catch {
                decodeFailureCount.add(1, ordering: .relaxed)
                warnings.undecodable.warn(["level": "\(self.name)", "key": "\(describeKey(String(decoding: name, as: UTF8.self)))",
                                                "codec": "\(codec.name)", "error": "\(error)"])
                undecodable.withLock { seen in
                    if seen.count >= Self.undecodableRemembered { seen.removeAll() }
                    seen.insert(name)
                }
                return nil
            }
        default: throw RedisError.protocolError("unexpected reply \(reply)")
        }
    }

    /// Keys whose value was last read undecodable (at most this many).
    static var undecodableRemembered: Int { 256 }

    /// `value` with the expiry a `PTTL` reply gives, measured from `sentAt`
    /// (before the server read it, so never later than the key's own); `nil`
    /// if the key went away between the two commands.
    static func entry(_ value: Value, pttl: RESPValue, sentAt: CacheInstant) throws -> CacheEntry<Value>? {
        guard case .integer(let milliseconds) = pttl else { throw RedisError.protocolError("unexpected PTTL reply \(pttl)") }
        switch milliseconds {
        case -1: return CacheEntry(value: value)
        case ..<0: return nil
        default: return CacheEntry(value: value, expiresAt: sentAt.advanced(by: .milliseconds(milliseconds)))
        }
    }

    /// `GET`; a lease (with leases) is a miss, and a write kept during an
    /// outage (``writesAwaitingReplay``) answers for its key.
    public func getIfPresent(_ key: Key) async throws -> Value? {
        await beginOperation()
        let name = redisKey(key)
        if let pending = pendingWrite(name) { return pending.value }
        let reply: RESPValue
        do { reply = try await client.send([RedisCommandName.get, name]) } catch {
            missBook.record(name, lease: nil, serverTime: nil)
            throw error
        }
        let value = try decode(reply, name: name)
        if value == nil { await afterMiss([reply], names: [name]) }
        return value
    }

    /// The value with its expiry: `GET` and `PTTL` in one transaction (one
    /// round trip), so a write by another client cannot fall between them and
    /// pair one value with another's expiry.
    public func entry(forKey key: Key) async throws -> CacheEntry<Value>? {
        await beginOperation()
        let name = redisKey(key)
        if let pending = pendingWrite(name) { return pending.entry }
        let sentAt = clock.now()
        do {
            let replies = try await client.send(transaction: [[RedisCommandName.get, name], [RedisCommandName.pttl, name]])
            for reply in replies {
                if case .error(let message) = reply { throw RedisError.server(message) }
            }
            let found = try decode(replies[0], name: name).flatMap { try Self.entry($0, pttl: replies[1], sentAt: sentAt) }
            // (A value gone between GET and PTTL leaves no lease to rely on.)
            if found == nil { await afterMiss([replies[0]], names: [name]) }
            return found
        } catch {
            missBook.record(name, lease: nil, serverTime: nil)
            throw error
        }
    }

    /// After a miss (see ``RedisMissBook``): asks Redis for `TIME` and,
    /// with leases, for each key records the lease it holds, or places one
    /// where the key is absent (`SET NX PX`, in the same round trip, on the
    /// write connection, so Redis does not report the leases back), and
    /// records both for the keys' back-fills. Never throws: what could not
    /// be learned only makes the back-fills more careful (declined, with
    /// leases; judged by their age, without the time).
    func afterMiss(_ replies: [RESPValue], names: [[UInt8]]) async {
        var leases: [[UInt8]?] = Array(repeating: nil, count: names.count)
        var absent: [(index: Int, lease: [UInt8])] = []
        if self.leases {
            for (index, reply) in replies.enumerated() {
                if case .bulkString(nil) = reply {
                    absent.append((index, RedisLease.newLease()))
                } else if let bytes = reply.bytes, RedisLease.isLease(bytes) {
                    leases[index] = bytes
                }  // else a value that does not decode: it stays, no lease
            }
        }
        // On a cluster the names share a slot (readChunk splits by slot),
        // and TIME must come from their master: its tombstones hold its time.
        // TIME has no key, so the node the commands first go to answers it.
        var timeSource: RedisClient?
        let answers: [RESPValue]?
        if absent.isEmpty {
            if let cluster = client.cluster, let first = names.first {
                answers = try? await cluster.send(building: { node in
                    timeSource = node
                    return [[RedisCommandName.time]]
                }, slot: RedisClusterSlot.of(first))
            } else {
                timeSource = client
                answers = try? await [client.send([RedisCommandName.time])]
            }
        } else {
            let milliseconds = Array(String(RedisLease.lifetime.nanoseconds / 1_000_000).utf8)
            let commands = absent.map { [RedisCommandName.set, names[$0.index], $0.lease, RedisCommandName.nx, RedisCommandName.px, milliseconds] }
            answers = try? await Self.sendWrite(building: { node in
                timeSource = timeSource ?? node
                return commands + [[RedisCommandName.time]]
            }, on: writeTarget(for: names[absent[0].index]))
        }
        let receivedAt = ContinuousClock.now
        for (position, placed) in absent.enumerated() {
            if case .simpleString? = answers?[position] { leases[placed.index] = placed.lease }  // else written meanwhile, or Redis is down
        }
        let local = clock.now()
        let server = answers?.last.flatMap(RedisServerClock.microseconds(fromTime:))
        if let server, let timeSource { timeSource.serverClock.learn(server: server, receivedAt: receivedAt) }
        let serverTime = server.map { RedisMissBook.ServerTime(server: $0, local: local, source: timeSource) }
        for (index, name) in names.enumerated() { missBook.record(name, lease: leases[index], serverTime: serverTime) }
    }

    /// One `MGET` per 512 keys, with the keys' `PTTL`s in the same
    /// transaction (one round trip); at most `maxConcurrency` of those
    /// batches in flight. A batch that fails (Redis down) reads as misses.
    public func entries(forKeys keys: [Key], maxConcurrency: Int?) async -> [CacheEntry<Value>?] {
        var found = await entriesInRedis(forKeys: keys, maxConcurrency: maxConcurrency)
        if backlog?.isActive == true {  // the writes waiting for replay come first
            for (index, key) in keys.enumerated() {
                if let pending = pendingWrite(redisKey(key)) { found[index] = pending.entry }
            }
        }
        return found
    }

    private func entriesInRedis(forKeys keys: [Key], maxConcurrency: Int?) async -> [CacheEntry<Value>?] {
        if keys.isEmpty { return [] }
        await beginOperation()
        let size = Self.batchChunkSize
        let chunks = stride(from: 0, to: keys.count, by: size).map { $0..<min($0 + size, keys.count) }
        if chunks.count == 1 { return await readChunk(keys.map(redisKey)) }
        let limit = max(1, maxConcurrency ?? chunks.count)
        return await withTaskGroup(of: (Range<Int>, [CacheEntry<Value>?]).self) { group in
            var results = [CacheEntry<Value>?](repeating: nil, count: keys.count)
            var next = 0
            func addNext() {
                guard next < chunks.count else { return }
                let range = chunks[next]
                next += 1
                let names = keys[range].map(redisKey)
                group.addTask { (range, await self.readChunk(names)) }
            }
            for _ in 0..<min(limit, chunks.count) { addNext() }
            while let (range, entries) = await group.next() {
                results.replaceSubrange(range, with: entries)
                addNext()
            }
            return results
        }
    }

    func readChunk(_ names: [[UInt8]]) async -> [CacheEntry<Value>?] {
        if client.isCluster, let first = names.first, names.contains(where: { RedisClusterSlot.of($0) != RedisClusterSlot.of(first) }) {
            return await readChunkBySlot(names)
        }
        let misses = [CacheEntry<Value>?](repeating: nil, count: names.count)
        let sentAt = clock.now()
        let pttl = RedisCommandName.pttl
        guard let replies = try? await client.send(transaction: [[RedisCommandName.mget] + names] + names.map { [pttl, $0] }),
              case .array(let values?) = replies[0], values.count == names.count else {
            for name in names { missBook.record(name, lease: nil, serverTime: nil) }
            return misses
        }
        let entries = zip(names, zip(values, replies.dropFirst())).map { name, replies -> CacheEntry<Value>? in
            guard let value = (try? decode(replies.0, name: name)) ?? nil else { return nil }
            return (try? Self.entry(value, pttl: replies.1, sentAt: sentAt)) ?? nil
        }
        let missed = entries.indices.filter { entries[$0] == nil }
        if !missed.isEmpty { await afterMiss(missed.map { values[$0] }, names: missed.map { names[$0] }) }
        return entries
    }

    /// A set with the level's `defaultTTL` (see ``set(_:forKey:expiresAt:)``).
    public func set(_ value: Value, forKey key: Key) async throws {
        try await set(value, forKey: key, expiresAt: nil)
    }

    /// `SET` with `PXAT`: `expiresAt` (`nil`: the level's `defaultTTL`) on
    /// the server's clock, never later than the true deadline however long
    /// the write waits (see docs/redis.md); a deadline already past deletes
    /// the key. While Redis is unreachable and an outage backlog is on, kept
    /// for replay instead.
    public func set(_ value: Value, forKey key: Key, expiresAt: CacheInstant?) async throws {
        await beginOperation()
        if let backlog, backlog.isActive { return keep(.set(value, expiresAt: expiresAt), of: key, in: backlog) }
        do {
            try await setNow(value, forKey: key, expiresAt: expiresAt)
        } catch {
            try keepForReplay(.set(value, expiresAt: expiresAt), of: key, after: error)
        }
    }

    /// ``set(_:forKey:expiresAt:)``'s write. A back-fill's report still to
    /// come is no longer recognised: the key holds this write now.
    func setNow(_ value: Value, forKey key: Key, expiresAt: CacheInstant?) async throws {
        echoes.forget(redisKey(key))
        try await reporting(.key(key)) { try await store(value, forKey: key, expiresAt: expiresAt, backfill: nil) }
    }

    /// A back-fill is `SET NX`: a key present now was written since the
    /// read missed here, so it is newer and kept (`BackfillDeclined`); so
    /// is one a remove's tombstone covers, or, with leases, one whose lease
    /// the read did not leave (see the notes in the body).
    public func backfill(_ fill: Backfill<Value>, forKey key: Key) async throws {
        await beginOperation()
        try await reporting(.key(key)) { try await store(fill.value, forKey: key, expiresAt: fill.expiresAt, backfill: fill) }
    }

    /// Replaces the key's value only if it still holds `seen`'s bytes (and
    /// no remove or clear came after the refresh's load began: tombstones),
    /// in one script: another client's newer value is never replaced.
    public func replace(_ seen: Value, with fill: Backfill<Value>, forKey key: Key) async throws {
        await beginOperation()
        let held: Data
        do { held = try codec.encoded(seen) } catch { throw BackfillDeclined() }
        try await reporting(.key(key)) {
            try await store(fill.value, forKey: key, expiresAt: fill.expiresAt, backfill: fill, replacing: Array(held))
        }
    }

    /// The body of ``set(_:forKey:expiresAt:)``, ``backfill(_:forKey:)``
    /// (`backfill` set) and ``replace(_:with:forKey:)`` (`replacing` set too:
    /// the bytes the key must hold, in place of a lease).
    private func store(_ value: Value, forKey key: Key, expiresAt: CacheInstant?, backfill: Backfill<Value>?,
                       replacing: [UInt8]? = nil) async throws {
        let isBackfill = backfill != nil
        let encoded: Data
        do { encoded = try codec.encoded(value) } catch {
            // A failed set leaves no older value to serve. (A back-fill
            // follows a miss: what Redis holds now is newer; leave it.)
            if !isBackfill { _ = try? await sendWrite([RedisCommandName.del, redisKey(key)], key: redisKey(key)) }
            throw error
        }
        let name = redisKey(key)
        let arguments = [RedisCommandName.set, name, Array(encoded)]
        var milliseconds: [UInt8] = []
        let deadline = StoredDeadline.resolve(given: expiresAt, backfill: isBackfill) { defaultTTL.map { clock.now().advanced(by: $0) } }
        // A back-fill already past its deadline writes nothing (no need to connect).
        if isBackfill, let deadline, Self.timeLeft(until: deadline, from: clock.now()) == nil { return }
        // The time left is measured once a connection is in hand: Redis counts
        // `PX` from when it runs the command, and a connect (or a wait for
        // one) can take seconds, which the value must not get on top.
        let connection = try await writeTarget(for: name)
        var expires: CacheInstant?  // the deadline sent; `nil`: none (or beyond a century)
        if let deadline {
            guard let left = Self.timeLeft(until: deadline, from: clock.now()) else {
                // Already past: the value must not be readable even for the
                // millisecond `PX 1` would keep it. A back-fill writes nothing.
                if isBackfill { return }
                _ = try RedisClient.checked(await Self.sendWrite([[RedisCommandName.del, name]], on: connection)[0])
                return
            }
            // Beyond a century (or past 64 bits) is "never": Redis refuses
            // expiry times that far out.
            if left < Self.longestTTL {
                expires = deadline
                milliseconds = Array(String(max(1, left / 1_000_000)).utf8)
            }
        }
        guard let backfill else {
            // The deadline goes as a time on the clock of the server that
            // runs the write (`PXAT`, see ``RedisServerClock``): `PX` counts
            // from when the server runs the command, so a write that waited
            // (a stalled server, a slow network) kept the value that much
            // past its deadline.
            var server: RedisClient?
            let build: (RedisClient) async throws -> [[[UInt8]]] = { node in
                server = node
                return [try await self.setCommand(arguments, expiresAt: expires, on: node)]
            }
            var reply = try await Self.sendWrite(building: build, on: connection)[0]
            if expires != nil, Self.refusesPXAT(reply), let server, !server.serverClock.refusesPXAT {
                server.serverClock.notePXATRefused()  // Redis before 6.2: sent again as a script
                reply = try await Self.sendWrite(building: build, on: connection)[0]
            }
            _ = try RedisClient.checked(reply)
            return
        }
        // A back-fill carries what a level below held when the read began;
        // a key present now was written since (the read missed here), by
        // another process or client, so it is newer: keep it.
        //
        // A key this level found holding a value it cannot decode (another
        // version's format, in a rolling deploy) is left alone: the other
        // version may be reading it, and replacing it would only make the two
        // versions overwrite each other on every miss. The back-fill still
        // reaches the levels above (it is not declined).
        //
        // A remove or clear through this level, in any process, leaves a
        // tombstone holding the server's time (see ``remove(_:)``). A
        // back-fill whose read began before it may carry what the remove was
        // meant to end (the cache-aside race: a read of the old data, the data
        // changes and the key is removed, the read's answer is written back),
        // so it is declined. The read's start on the server's clock is the
        // `TIME` its miss recorded (``RedisMissBook``): a tombstone before it
        // is older than the read, however recent. Without that record, the
        // read's age is measured here, on this machine's monotonic clock, and
        // compared on the server with its own time, so no two clocks are
        // compared; ``backfillMargin`` is added for the time the script may
        // take to reach the server and run. The age is taken once a
        // connection is in hand (a reconnect can take a second); and if the
        // reply still comes later than the margin allows, the back-fill is
        // undone (its own value deleted, never another's).
        if replacing == nil, undecodable.withLock({ $0.remove(name) }) != nil { return }
        var age: Int64 = -1  // unknown: any tombstone declines
        let sent = ContinuousClock.now
        if let readAge = backfill.readAge {
            guard readAge < CacheContext.backfillAgeLimit else { throw BackfillDeclined() }
            age = (readAge + Self.backfillMargin).nanoseconds / 1_000
        }
        // The read's own instant, not `sent - age`: the record was made
        // microseconds before the read began, and an age taken a moment after
        // `sent` would move the start before it.
        let record = backfill.readStartedAt.flatMap { missBook.record(for: name, readStart: $0) }
        let readTime = record?.serverTime?.server
        // The deadline on the server's clock, for the script to store what is
        // left of it when it runs (`milliseconds` counts from when it was
        // sent): by the record's `TIME`, else by what is known of the clock
        // of the server that runs it (``RedisServerClock``; nothing is asked).
        let recordDeadline = expires.flatMap { record?.serverMicroseconds(of: $0) }
        // On a cluster both times are the clock of the master that answered
        // the read's `TIME`: the back-fill goes to that master only, and is
        // declined if it redirects (the slot moved: another clock, and the
        // tombstones are there). Without a time it is judged by its age,
        // on whichever master serves the slot.
        let target = readTime == nil || !client.isCluster ? connection : record?.serverTime?.source.map(pinnedTarget) ?? connection
        // With leases, the key must still hold the lease the read left; a
        // refresh, the value it replaces.
        var lease: [UInt8] = replacing ?? []
        if replacing == nil, leases {
            guard let held = record?.lease else { throw BackfillDeclined() }
            lease = held
        }
        // Only a write on the tracking connection comes back as a report to
        // recognise (one on a pooled connection, while it reconnects, is not
        // heard); a write that fails or is declined takes its record back.
        let recorded = target.isTracked(by: subscriber) || (client.isCluster && clusterInvalidation != nil)
        if recorded { echoes.expect(name, Array(encoded)) }
        let reply: RESPValue
        do {
            reply = try await Self.sendWrite(building: { server in
                let serverDeadline = recordDeadline ?? expires.flatMap { server.serverClock.serverMicroseconds(of: $0, clock: clock) }
                return [[RedisCommandName.eval, Array(Self.backfillScript.utf8), Array("3".utf8),
                         name, tombstone(of: name), tombstoneOfAll(for: name),
                         Array(encoded), milliseconds, Array(String(age).utf8), lease,
                         readTime.map { Array(String($0).utf8) } ?? [],
                         serverDeadline.map { Array(String($0).utf8) } ?? []]]
            }, on: target)[0]
        } catch {
            if recorded { echoes.cancel(name, Array(encoded)) }
            throw error
        }
        switch reply {
        case .null, .bulkString(nil):
            echoes.cancel(name, Array(encoded))
            throw BackfillDeclined()
        case .error(let message):
            echoes.cancel(name, Array(encoded))
            if RedisClusterRedirect(message: message) != nil { throw BackfillDeclined() }  // pinned, and the slot moved
            throw RedisError.server(message)
        default: break
        }
        // (Judged by the read's server time, the reply's delay changes nothing.)
        if readTime == nil, ContinuousClock.now - sent >= Self.backfillMargin {
            // Taken back, on the same connection: Redis reports the delete
            // too, and the key is then expected to be absent.
            if recorded { echoes.expect(name, nil) }
            RedisProcessCounters.backfillsTakenBack.add(1, ordering: .relaxed)
            _ = try? await Self.sendWrite([[RedisCommandName.eval, Array(Self.undoScript.utf8), Array("1".utf8), name, Array(encoded)]],
                                          on: connection)
            throw BackfillDeclined()
        }
    }

    /// The `SET` `base` (`SET key value`) with the deadline `expiresAt` on
    /// the clock of `server`, which runs it: `PXAT` (see
    /// ``RedisServerClock``); a script given the same time, where `PXAT` is
    /// refused (Redis before 6.2); `PX` for the time left now where the
    /// server refuses `TIME` (counted from when it runs the write), or `DEL`
    /// when none is left.
    func setCommand(_ base: [[UInt8]], expiresAt: CacheInstant?, on server: RedisClient) async throws -> [[UInt8]] {
        guard let expiresAt else { return base }
        guard let at = try await server.serverMicroseconds(of: expiresAt, clock: clock) else {
            guard let left = Self.timeLeft(until: expiresAt, from: clock.now()) else { return [RedisCommandName.del, base[1]] }
            return base + [RedisCommandName.px, Array(String(max(1, left / 1_000_000)).utf8)]
        }
        if server.serverClock.refusesPXAT {
            return [RedisCommandName.eval, Array(Self.setBeforeScript.utf8), Array("1".utf8), base[1], base[2], Array(String(at).utf8)]
        }
        return base + [RedisCommandName.pxat, Array(String(RedisServerClock.pxat(forMicroseconds: at)).utf8)]
    }

    /// Whether `reply` is Redis refusing `PXAT` (before 6.2: a syntax error;
    /// the rest of the `SET` is always well formed).
    static func refusesPXAT(_ reply: RESPValue) -> Bool {
        guard case .error(let message) = reply else { return false }
        return message.hasPrefix("ERR syntax error")
    }

    /// A set for servers without `PXAT`: `SET KEYS[1] ARGV[1]` until the
    /// server time `ARGV[2]` (microseconds), as `PX` for what is left of it
    /// when the script runs (less the millisecond Redis keeps a key past
    /// its expiry); `DEL` when nothing is.
    static var setBeforeScript: String {
        """
        local t = redis.call('TIME')
        local left = math.floor((tonumber(ARGV[2]) - (tonumber(t[1]) * 1000000 + tonumber(t[2]))) / 1000) - 1
        if left < 1 then return redis.call('DEL', KEYS[1]) end
        return redis.call('SET', KEYS[1], ARGV[1], 'PX', string.format('%d', left))
        """
    }

    /// Nanoseconds from `now` to `deadline` (`.max` past 64 bits), or `nil`
    /// when the deadline is not after `now`.
    static func timeLeft(until deadline: CacheInstant, from now: CacheInstant) -> Int64? {
        let (left, overflow) = deadline.nanosecondsSince1970.subtractingReportingOverflow(now.nanosecondsSince1970)
        if overflow { return deadline < now ? nil : .max }
        return left > 0 ? left : nil
    }

    /// Deletes `KEYS[1]` if it still holds `ARGV[1]` (a back-fill that took
    /// too long to be judged, taken back).
    static var undoScript: String {
        """
        if redis.call('GET', KEYS[1]) == ARGV[1] then return redis.call('DEL', KEYS[1]) end
        return 0
        """
    }

    /// A back-fill: declined (nil) when the key's tombstone or the level's
    /// holds a server time at or after the read began (the server time
    /// `ARGV[5]`, else `ARGV[3]` microseconds ago; -1: unknown, any
    /// tombstone declines) or is not a time; otherwise `SET NX`, with
    /// `PX ARGV[2]` unless it is empty, or what is left until the server
    /// time `ARGV[6]`, less the millisecond Redis keeps a key past its
    /// expiry (declined when nothing is). With a lease (`ARGV[4]`
    /// not empty), declined unless the key holds exactly that lease, which
    /// the `SET` then replaces.
    static var backfillScript: String {
        """
        local t = redis.call('TIME')
        local now = tonumber(t[1]) * 1000000 + tonumber(t[2])
        local since = tonumber(ARGV[5])
        if since == nil and tonumber(ARGV[3]) >= 0 then since = now - tonumber(ARGV[3]) end
        local px = ARGV[2]
        local deadline = tonumber(ARGV[6])
        if deadline then
          local left = math.floor((deadline - now) / 1000) - 1
          if left < 1 then return false end
          px = string.format('%d', left)
        end
        for i = 2, 3 do
          local at = redis.call('GET', KEYS[i])
          if at then
            local when = tonumber(at)
            if since == nil or when == nil or when >= since then return false end
          end
        end
        if ARGV[4] ~= '' then
          if redis.call('GET', KEYS[1]) ~= ARGV[4] then return false end
          if px == '' then return redis.call('SET', KEYS[1], ARGV[1]) end
          return redis.call('SET', KEYS[1], ARGV[1], 'PX', px)
        end
        if px == '' then return redis.call('SET', KEYS[1], ARGV[1], 'NX') end
        return redis.call('SET', KEYS[1], ARGV[1], 'NX', 'PX', px)
        """
    }

    /// Sets the tombstone `KEYS[1]` to the server's time in microseconds (as
    /// text: Lua numbers would print fewer digits) for `ARGV[1]`
    /// milliseconds.
    static var tombstoneScript: String {
        """
        local t = redis.call('TIME')
        redis.call('SET', KEYS[1], t[1] .. string.rep('0', 6 - #t[2]) .. t[2], 'PX', ARGV[1])
        return 1
        """
    }

    /// Added to a back-fill's read age for the time between measuring it and
    /// the server running the script: a tombstone less than this older than
    /// the read also declines it. A server that holds a back-fill longer
    /// than this before running it (stalled) can let one through.
    static var backfillMargin: Duration { .milliseconds(250) }

    /// How long a tombstone stays: twice the oldest read a composition
    /// still back-fills (``CacheContext/backfillAgeLimit``), plus a minute.
    static var tombstoneMilliseconds: Int64 { (CacheContext.backfillAgeLimit * 2 + .seconds(60)).nanoseconds / 1_000_000 }

    /// The tombstone of the Redis key `name`: outside the level's prefix, so
    /// it is neither tracked nor cleared as one of the level's keys.
    /// On a cluster it carries the hash tag of the key's slot (see ``slotTag(of:)``).
    func tombstone(of name: [UInt8]) -> [UInt8] { Array("strata-tombstone:".utf8) + slotTag(of: name) + name }

    /// The tombstone a clear of this level leaves, that a back-fill of
    /// `name` reads: one per level, or on a cluster one per slot.
    func tombstoneOfAll(for name: [UInt8]) -> [UInt8] { Array("strata-tombstone-all:".utf8) + slotTag(of: name) + prefix }

    /// Longer TTLs are stored without expiry (nanoseconds; 100 years).
    static var longestTTL: Int64 { 100 * 365 * 86_400 * 1_000_000_000 }

    /// A tombstone for the key holding the server's time, which declines
    /// back-fills of reads that began before it (see
    /// ``set(_:forKey:expiresAt:)``), then `DEL`, in one write. Where scripts
    /// are refused, the `DEL` alone.
    ///
    /// The `DEL` is not part of the script: Redis takes a script's writes for
    /// the script's, not the connection's, so `NOLOOP` would not keep it from
    /// being reported back. A back-fill running between the two commands
    /// meets the tombstone already, so the order keeps the guarantee.
    public func remove(_ key: Key) async throws {
        await beginOperation()
        if let backlog, backlog.isActive { return keep(.remove, of: key, in: backlog) }
        do {
            try await removeNow(key)
        } catch {
            try keepForReplay(.remove, of: key, after: error)
        }
    }

    /// ``remove(_:)``'s write.
    func removeNow(_ key: Key) async throws {
        let name = redisKey(key)
        echoes.forget(name)
        try await reporting(.key(key)) {
            let replies = try await Self.sendWrite([
                [RedisCommandName.eval, Array(Self.tombstoneScript.utf8), Array("1".utf8),
                 tombstone(of: name), Array(String(Self.tombstoneMilliseconds).utf8)],
                [RedisCommandName.del, name],
            ], on: writeTarget(for: name))
            _ = try RedisClient.checked(replies[1])
        }
    }

    /// Deletes every key of this level (and nothing else: not the keys of a
    /// level whose prefix extends this one). Not cancelled with the caller:
    /// a clear reports no failure, so one from a cancelled task must still
    /// happen (it returned having cleared nothing, and the composition's
    /// upper levels then back-filled the old keys; from an audit).
    public func clear() async {
        await Task { _ = try? await self.clearPrefix() }.value
    }

    /// Like ``clear()`` but reports failures; returns how many keys went.
    @discardableResult
    public func clearPrefix() async throws -> Int {
        await beginOperation()
        if let backlog, backlog.isActive {
            if backlog.keepClear() { startReplay() }
            return 0
        }
        do {
            return try await reporting(.all, partial: true) { try await clearPrefixNow() }
        } catch {
            guard let backlog, Self.isUnreachable(error) else { throw error }
            if backlog.keepClear() { startReplay() }
            return 0
        }
    }

    /// The body of ``clearPrefix()``.
    func clearPrefixNow() async throws -> Int {
        if let cluster = client.cluster { return try await clearCluster(cluster) }
        echoes.forgetAll()
        // First the tombstone: back-fills of reads that began before the
        // clear are declined. Without it one may land after the clear, so a
        // clear whose tombstone failed fails too (once its keys are unlinked):
        // the levels above are flushed, and a backlog keeps it for replay.
        let tombstone = tombstoneOfAll(for: prefix)
        var tombstoneFailure: (any Error)?
        do {
            _ = try await sendWrite([RedisCommandName.eval, Array(Self.tombstoneScript.utf8), Array("1".utf8),
                                     tombstone, Array(String(Self.tombstoneMilliseconds).utf8)], key: tombstone)
        } catch { tombstoneFailure = error }
        let removed = try await unlinkOwnKeys(listedBy: client) { names in
            _ = try await sendWrite([RedisCommandName.unlink] + names, key: names[0])
        }
        if let tombstoneFailure {
            warnings.clearTombstonesFailed.warn(["level": "\(name)", "failures": "\(tombstoneFailure)"])
            throw RedisError.unavailable("clear failed: its tombstone was not written: \(tombstoneFailure)")
        }
        return removed
    }

    /// `SCAN MATCH prefix*` on `server` (the level's, or one master of a
    /// cluster), handing each batch of this level's keys it lists to
    /// `unlink`; returns how many there were.
    func unlinkOwnKeys(listedBy server: RedisClient, _ unlink: ([[UInt8]]) async throws -> Void) async throws -> Int {
        var cursor = "0"
        var removed = 0
        let pattern = RedisKeyLayout.globEscaped(prefix) + [UInt8(ascii: "*")]
        repeat {
            let reply = try await server.sendPastBreaker([RedisCommandName.scan, Array(cursor.utf8), RedisCommandName.match, pattern,
                                                          RedisCommandName.count, Array("1000".utf8)])
            guard case .array(let parts?) = reply, parts.count == 2, let next = parts[0].bytes,
                  case .array(let keys?) = parts[1] else {
                throw RedisError.protocolError("unexpected SCAN reply from \(server.configuration.host):\(server.configuration.port)")
            }
            cursor = String(decoding: next, as: UTF8.self)
            let names = keys.compactMap(\.bytes).filter(ownsKey)
            if !names.isEmpty {
                try await unlink(names)
                removed += names.count
            }
        } while cursor != "0"
        return removed
    }

    /// Redis keeps these entries; memory warnings do not concern it.
    public func onMemoryWarning() async {}

    /// Redis expires entries itself.
    @discardableResult public func removeExpired() async -> Int { 0 }

    /// Whether `key` exists (EXISTS).
    public func contains(_ key: Key) async throws -> Bool {
        if leases {  // a lease is no value
            guard case .bulkString(let buffer) = try await client.send([RedisCommandName.get, redisKey(key)]) else {
                throw RedisError.protocolError("unexpected GET reply")
            }
            return buffer.map { !RedisLease.isLease($0.readableBytesView) } ?? false
        }
        guard case .integer(let count) = try await client.send([RedisCommandName.exists, redisKey(key)]) else {
            throw RedisError.protocolError("unexpected EXISTS reply")
        }
        return count > 0
    }

    /// Where to run the tasks that read through this level for the fewest
    /// thread switches: its connections' event loops (see ``EventLoopTaskExecutor``).
    public var taskExecutor: EventLoopTaskExecutor { client.taskExecutor }

    /// PING.
    public func ping() async throws {
        guard case .simpleString("PONG") = try await client.send("PING") else { throw RedisError.protocolError("no PONG") }
    }

    /// Stops the invalidation connection (without flushing the levels above)
    /// and closes the client's connections, unless the client was given (shared).
    public func shutdown() async {
        backlog?.stop()
        await subscriber?.stop()
        await clusterInvalidation?.stop()
        if ownsClient { await client.shutdown() }
    }
}

extension RedisCacheLevel where Value == Data {
    /// A level on a client of its own, made from `url`, holding bytes as they are (`CacheCodec.data`);
    /// see ``init(url:prefix:codec:defaultTTL:connections:commandTimeout:connectTimeout:name:invalidatesLevelsAbove:leases:keyLayout:outageBacklog:)``.
    public convenience init(url: String, prefix: String, defaultTTL: Duration? = nil, connections: Int = 2,
                            commandTimeout: Duration = .seconds(2), invalidatesLevelsAbove: Bool = true,
                            leases: Bool = false, keyLayout: RedisKeyLayout = .natural) throws {
        try self.init(url: url, prefix: prefix, codec: .data, defaultTTL: defaultTTL, connections: connections,
                      commandTimeout: commandTimeout, invalidatesLevelsAbove: invalidatesLevelsAbove,
                      leases: leases, keyLayout: keyLayout)
    }
}

extension RedisCacheLevel where Value == String {
    /// A level on a client of its own, made from `url`, holding UTF-8 text (`CacheCodec.string`);
    /// see ``init(url:prefix:codec:defaultTTL:connections:commandTimeout:connectTimeout:name:invalidatesLevelsAbove:leases:keyLayout:outageBacklog:)``.
    public convenience init(url: String, prefix: String, defaultTTL: Duration? = nil, connections: Int = 2,
                            commandTimeout: Duration = .seconds(2), invalidatesLevelsAbove: Bool = true,
                            leases: Bool = false, keyLayout: RedisKeyLayout = .natural) throws {
        try self.init(url: url, prefix: prefix, codec: .string, defaultTTL: defaultTTL, connections: connections,
                      commandTimeout: commandTimeout, invalidatesLevelsAbove: invalidatesLevelsAbove,
                      leases: leases, keyLayout: keyLayout)
    }
}

extension RedisCacheLevel where Value: Codable {
    /// A level on a client of its own, made from `url`, holding values as JSON (`CacheCodec.json()`);
    /// see ``init(url:prefix:codec:defaultTTL:connections:commandTimeout:connectTimeout:name:invalidatesLevelsAbove:leases:keyLayout:outageBacklog:)``.
    public convenience init(url: String, prefix: String, defaultTTL: Duration? = nil, connections: Int = 2,
                            commandTimeout: Duration = .seconds(2), invalidatesLevelsAbove: Bool = true,
                            leases: Bool = false, keyLayout: RedisKeyLayout = .natural) throws {
        try self.init(url: url, prefix: prefix, codec: .json(), defaultTTL: defaultTTL, connections: connections,
                      commandTimeout: commandTimeout, invalidatesLevelsAbove: invalidatesLevelsAbove,
                      leases: leases, keyLayout: keyLayout)
    }
}
