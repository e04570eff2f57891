import Foundation
import Strata
@testable import StrataRedis
import StrataTestSupport
import Synchronization
import Testing

/// A level on a real 3-master Redis Cluster on loopback (#33, item 6).
@Suite(.serialized) struct RedisClusterLevelTests {
    /// What the writers of ``reshardUnderLoadGivesNoWrongAnswer()`` saw.
    final class ReshardRun: Sendable {
        let stop = Atomic<Bool>(false)
        let wrong = Mutex<[String]>([])
        let failures = Mutex<[String]>([])
        let rounds = Atomic<Int>(0)
    }

    /// `redis-cli -p <node's port> arguments…` (another process, not Strata).
    @discardableResult
    func cli(_ cluster: RedisCluster, _ node: Int, _ arguments: String...) async throws -> String {
        try await RedisCluster.cli(["-p", "\(cluster.nodes[node].port)"] + arguments)
    }

    /// The index in `cluster.nodes` of the master serving `name`'s slot, per the level's map.
    func owner(of name: String, _ level: RedisCacheLevel<String, String>, _ cluster: RedisCluster) async throws -> Int {
        let address = try await #require(level.client.cluster).address(ofSlot: RedisClusterSlot.of(Array(name.utf8)))
        return try #require(cluster.addresses.firstIndex(of: address))
    }

    @Test func keysSpreadOverEveryMasterRoundTrip() async throws {
        let cluster = try await RedisCluster()
        let level = try RedisCacheLevel<String, String>(cluster: cluster.seedURLs, prefix: "rt:", codec: .string,
                                                         defaultTTL: .seconds(600))
        let keys = (0..<300).map { "user:\($0)" }
        for key in keys { try await level.set("v-\(key)", forKey: key) }
        var perNode = [0, 0, 0]
        for node in 0..<3 {
            perNode[node] = Int(try await cli(cluster, node, "DBSIZE").trimmingCharacters(in: .whitespacesAndNewlines)) ?? -1
        }
        #expect(perNode.allSatisfy { $0 > 50 } && perNode.reduce(0, +) == 300, "keys per master: \(perNode)")
        for key in keys {
            #expect(try await level.getIfPresent(key) == "v-\(key)")
            let entry = try #require(try await level.entry(forKey: key))
            #expect(entry.value == "v-\(key)" && entry.expiresAt != nil)
            #expect(try await level.contains(key))
        }
        // What other clients read: prefix + key, on the node that owns it.
        let node = try await owner(of: "rt:user:7", level, cluster)
        #expect(try await cli(cluster, node, "GET", "rt:user:7").contains("v-user:7"))
        try await level.remove("user:7")
        #expect(try await level.getIfPresent("user:7") == nil)
        #expect(try await !level.contains("user:7"))
        await level.shutdown()
        await cluster.kill()
    }

    @Test func batchReadsAcrossSlotsComeBackInOrder() async throws {
        let cluster = try await RedisCluster()
        let level = try RedisCacheLevel<String, String>(cluster: cluster.seedURLs, prefix: "mget:", codec: .string)
        // More than one MGET chunk (512 keys), every other key absent, some sharing a slot through a hash tag.
        let keys = (0..<1_100).map { $0 % 7 == 0 ? "{tag}:\($0)" : "k\($0)" }
        for (index, key) in keys.enumerated() where index % 2 == 0 { try await level.set("v\(index)", forKey: key) }
        let found = await level.entries(forKeys: keys, maxConcurrency: 2)
        #expect(found.count == keys.count)
        for (index, entry) in found.enumerated() {
            #expect(entry?.value == (index % 2 == 0 ? "v\(index)" : nil), "key \(keys[index])")
        }
        let some = await level.batchGetSome(["k4", "k1", "k2", "{tag}:0"])
        #expect(some["k4"] == "v4" && some["k1"] == nil && some["k2"] == "v2" && some["{tag}:0"] == "v0", "\(some)")
        await level.shutdown()
        await cluster.kill()
    }

    @Test func anotherClientsWriteOnAnyMasterDropsTheKeyAbove() async throws {
        let cluster = try await RedisCluster()
        let redis = try RedisCacheLevel<String, String>(cluster: cluster.seedURLs, prefix: "inv:", codec: .string)
        let memory = MemoryCacheLevel<String, String>(capacity: 1 << 20)
        let cache = memory + redis
        #expect(await poll(timeout: .seconds(10)) { redis.isReceivingInvalidations }, "\(redis.invalidationError ?? "")")
        // One key on each master.
        var byNode: [Int: String] = [:]
        for index in 0..<100 where byNode.count < 3 {
            let key = "user:\(index)"
            byNode[try await owner(of: "inv:" + key, redis, cluster)] = byNode[try await owner(of: "inv:" + key, redis, cluster)] ?? key
        }
        #expect(byNode.count == 3)
        for (_, key) in byNode {
            // Through the composition: it skips its own write's report and keeps the value above.
            try await cache.set("old", forKey: key)
            #expect(try await cache.get(key) == "old")
        }
        await cache.waitForPendingWrites()
        for (node, key) in byNode {
            #expect(try await poll { try await memory.getIfPresent(key) == "old" }, "\(key) above")
            #expect(try await cli(cluster, node, "SET", "inv:" + key, "new").contains("OK"))
            #expect(try await poll { try await memory.getIfPresent(key) == nil }, "master \(node)'s write of \(key) reached the level above")
            #expect(try await cache.get(key) == "new")
        }
        await redis.shutdown()
        await cluster.kill()
    }

    @Test func loadThroughBackfillsAndRemovesUseSlotTaggedTombstones() async throws {
        let cluster = try await RedisCluster()
        let redis = try RedisCacheLevel<String, String>(cluster: cluster.seedURLs, prefix: "bf:", codec: .string)
        let memory = MemoryCacheLevel<String, String>(capacity: 1 << 20)
        let loads = Atomic<Int>(0)
        let cache = memory + redis
        for index in 0..<30 {
            let key = "item:\(index)"
            let value = try await cache.get(key, ttl: .seconds(60)) { key in
                loads.add(1, ordering: .relaxed)
                return "loaded-\(key)"
            }
            #expect(value == "loaded-\(key)")
        }
        await cache.waitForPendingWrites()
        #expect(loads.load(ordering: .relaxed) == 30)
        // The back-fill script (key, its tombstone, the clear tombstone of its slot) ran on every master.
        for index in 0..<30 {
            #expect(try await poll { try await redis.getIfPresent("item:\(index)") == "loaded-item:\(index)" }, "item:\(index) in Redis")
        }
        try await cache.remove("item:3")
        let name = Array("bf:item:3".utf8)
        let tombstone = redis.tombstone(of: name)
        #expect(RedisClusterSlot.of(tombstone) == RedisClusterSlot.of(name))
        let node = try await owner(of: "bf:item:3", redis, cluster)
        let held = try await cli(cluster, node, "GET", String(decoding: tombstone, as: UTF8.self))
        #expect(Int(held.trimmingCharacters(in: .whitespacesAndNewlines)) != nil, "the tombstone holds the server's time: \(held)")
        #expect(try await redis.getIfPresent("item:3") == nil)
        await redis.shutdown()
        await cluster.kill()
    }

    @Test func clearRemovesThePrefixOnEveryMasterAndNothingElse() async throws {
        let cluster = try await RedisCluster()
        let mine = try RedisCacheLevel<String, String>(cluster: cluster.seedURLs, prefix: "mine:", codec: .string)
        let other = try RedisCacheLevel<String, String>(cluster: cluster.seedURLs, prefix: "other:", codec: .string)
        for index in 0..<200 {
            try await mine.set("m", forKey: "\(index)")
            try await other.set("o", forKey: "\(index)")
        }
        let removed = try await mine.clearPrefix()
        #expect(removed == 200)
        for node in 0..<3 {
            let left = try await cli(cluster, node, "--scan", "--pattern", "mine:*")
            #expect(left.trimmingCharacters(in: .whitespacesAndNewlines).isEmpty, "node \(node) kept \(left.prefix(200))")
            let kept = try await cli(cluster, node, "--scan", "--pattern", "other:*").split(separator: "\n").count
            #expect(kept > 30, "node \(node) holds \(kept) of the other prefix's keys")
        }
        for index in 0..<200 {
            #expect(try await mine.getIfPresent("\(index)") == nil)
            #expect(try await other.getIfPresent("\(index)") == "o")
        }
        // A clear leaves its tombstone in every slot (back-fills of older reads are declined there).
        let tombstones = try await cli(cluster, 0, "--scan", "--pattern", "strata-tombstone-all:*").split(separator: "\n").count
        #expect(tombstones > 5_000, "node 0's slots hold \(tombstones) clear tombstones")
        await mine.shutdown()
        await other.shutdown()
        await cluster.kill()
    }

    /// Moves 1,500 slots from node 0 to node 1 with `redis-cli --cluster
    /// reshard` while three writers set increasing versions of their own keys
    /// and read each back: every read answers the version just written.
    @Test func reshardUnderLoadGivesNoWrongAnswer() async throws {
        let cluster = try await RedisCluster()
        let level = try RedisCacheLevel<String, String>(cluster: cluster.seedURLs, prefix: "rs:", codec: .string,
                                                         invalidatesLevelsAbove: false)
        let router = try #require(level.client.cluster)
        // Keys in node 0's slots, so the reshard moves them.
        var keys: [String] = []
        var index = 0
        while keys.count < 200 {
            if try await owner(of: "rs:k\(index)", level, cluster) == 0 { keys.append("k\(index)") }
            index += 1
        }
        for key in keys { try await level.set("0", forKey: key) }
        let run = ReshardRun()
        let from = try await cluster.nodeID(0), to = try await cluster.nodeID(1)
        try await withThrowingTaskGroup(of: Void.self) { group in
            for writer in 0..<3 {
                let mine = keys.enumerated().filter { $0.offset % 3 == writer }.map(\.element)
                group.addTask {
                    var version = 0
                    while !run.stop.load(ordering: .relaxed) {
                        version += 1
                        for key in mine {
                            do {
                                try await level.set("\(version)", forKey: key)
                                let read = try await level.getIfPresent(key)
                                if read != "\(version)" { run.wrong.withLock { $0.append("\(key): \(read ?? "nil") after \(version)") } }
                            } catch {
                                run.failures.withLock { $0.append("\(key): \(error)") }
                            }
                        }
                        run.rounds.add(1, ordering: .relaxed)
                    }
                }
            }
            group.addTask {
                defer { run.stop.store(true, ordering: .relaxed) }
                let output = try await RedisCluster.cli(["--cluster", "reshard", cluster.addresses[0], "--cluster-from", from,
                                                         "--cluster-to", to, "--cluster-slots", "1500", "--cluster-yes",
                                                         "--cluster-pipeline", "5"], limit: .seconds(240))
                #expect(!output.contains("ERR"), "reshard: \(output.suffix(400))")
            }
            try await group.waitForAll()
        }
        #expect(run.wrong.withLock { $0 }.isEmpty, "wrong answers: \(run.wrong.withLock { $0.prefix(10) })")
        #expect(run.failures.withLock { $0 }.isEmpty, "failed requests: \(run.failures.withLock { $0.prefix(10) })")
        #expect(router.movedFollowed > 0, "the moved slots were found through MOVED")
        print("reshard under load: \(run.rounds.load(ordering: .relaxed)) rounds, MOVED \(router.movedFollowed), ASK \(router.askFollowed)")
        // The level's map now has node 1 serving some of the keys.
        _ = try await router.refreshTopology()
        var onNode1 = 0
        for key in keys where try await owner(of: "rs:" + key, level, cluster) == 1 { onNode1 += 1 }
        #expect(onNode1 > 0)
        for key in keys { #expect(try await level.getIfPresent(key) != nil) }
        await level.shutdown()
        await cluster.kill()
    }

    @Test func aKilledMastersSlotsFailNamingItAndTheOthersAnswer() async throws {
        let cluster = try await RedisCluster()
        let level = try RedisCacheLevel<String, String>(cluster: cluster.seedURLs, prefix: "kill:", codec: .string,
                                                         connectTimeout: .milliseconds(500))
        var byNode: [Int: [String]] = [:]
        for index in 0..<60 {
            let key = "k\(index)"
            try await level.set("v", forKey: key)
            byNode[try await owner(of: "kill:" + key, level, cluster), default: []].append(key)
        }
        #expect(byNode.count == 3)
        await cluster.nodes[2].kill()
        let dead = cluster.addresses[2]
        for key in byNode[2] ?? [] {
            do {
                _ = try await level.getIfPresent(key)
                Issue.record("\(key) on the killed master answered")
            } catch {
                #expect("\(error)".contains(dead), "the error names the node: \(error)")
            }
        }
        for node in [0, 1] {
            for key in byNode[node] ?? [] { #expect(try await level.getIfPresent(key) == "v", "\(key) on master \(node)") }
        }
        // A batch across all three: the dead master's keys read as misses, the others' are found.
        let keys = byNode.values.flatMap { $0 }
        let found = await level.entries(forKeys: keys, maxConcurrency: nil)
        for (key, entry) in zip(keys, found) {
            #expect((entry != nil) == !(byNode[2] ?? []).contains(key), "\(key)")
        }
        await level.shutdown()
        await cluster.kill()
    }

    /// Two nodes that each say the other serves a slot: the client stops
    /// after ``RedisClusterRouter/maxRedirects`` and says so.
    @Test func aRedirectLoopEndsInATypedError() async throws {
        let cluster = try await RedisCluster()
        let client = try RedisClient(cluster: cluster.seedURLs)
        let key = "loop"
        let slot = RedisClusterSlot.of(Array(key.utf8))
        let router = try #require(client.cluster)
        let ownerAddress = try await router.address(ofSlot: slot)
        let owner = try #require(cluster.addresses.firstIndex(of: ownerAddress))
        let other = (owner + 1) % 3
        // The owner alone is told the slot is the other's; the other still thinks it is the owner's.
        #expect(try await cli(cluster, owner, "CLUSTER", "SETSLOT", "\(slot)", "NODE", try await cluster.nodeID(other)).contains("OK"))
        do {
            _ = try await client.send("GET", key)
            Issue.record("a redirect loop answered")
        } catch let error as RedisError {
            guard case .tooManyRedirects(let text) = error else { throw error }
            #expect(text.contains("MOVED"))
        }
        await client.shutdown()
        await cluster.kill()
    }

    /// Leases (a miss leaves one in the key, the back-fill must find it) and
    /// the distributed-load lock are one key each: they work per slot.
    @Test func leasesAndTheDistributedLoadWorkOnEveryMaster() async throws {
        let cluster = try await RedisCluster()
        let redis = try RedisCacheLevel<String, String>(cluster: cluster.seedURLs, prefix: "lease:", codec: .string, leases: true)
        let memory = MemoryCacheLevel<String, String>(capacity: 1 << 20)
        let cache = memory + redis
        let loads = LoadCount()
        var nodes = Set<Int>()
        for index in 0..<30 {
            let key = "k\(index)"
            nodes.insert(try await owner(of: "lease:" + key, redis, cluster))
            let value = try await cache.get(key, ttl: .seconds(60),
                                            load: redis.distributedLoad(ttl: .seconds(60)) { key in
                                                loads.count.add(1, ordering: .relaxed)
                                                return "loaded-\(key)"
                                            })
            #expect(value == "loaded-\(key)")
        }
        await cache.waitForPendingWrites()
        #expect(nodes.count == 3)
        #expect(loads.count.load(ordering: .relaxed) == 30)
        for index in 0..<30 {
            let node = try await owner(of: "lease:k\(index)", redis, cluster)
            #expect(try await poll { try await cli(cluster, node, "GET", "lease:k\(index)").contains("loaded-k\(index)") },
                    "k\(index) holds the value, not a lease")
        }
        await redis.shutdown()
        await cluster.kill()
    }

    final class LoadCount: Sendable {
        let count = Atomic<Int>(0)
    }

    /// No node answers: requests fail with an error that says so, the
    /// composition's start-up wait ends, nothing hangs.
    @Test func aClusterThatCannotBeReachedFailsRequestsInWords() async throws {
        let ports = (0..<2).map { _ in RedisServer.unusedPort() }
        let redis = try RedisCacheLevel<String, String>(cluster: ports.map { "redis://127.0.0.1:\($0)" }, prefix: "down:",
                                                        codec: .string, connectTimeout: .milliseconds(300))
        let cache = MemoryCacheLevel<String, String>(capacity: 1 << 20) + redis
        do {
            _ = try await redis.getIfPresent("k")
            Issue.record("a cluster nobody runs answered")
        } catch {
            #expect("\(error)".contains("cannot read the cluster's slots"), "\(error)")
            #expect("\(error)".contains("127.0.0.1:\(ports[0])"), "\(error)")
        }
        _ = try? await cache.getIfPresent("k")  // the composition's start-up wait for the masters ends
        #expect(!redis.isReceivingInvalidations)
        await redis.shutdown()
    }
}
