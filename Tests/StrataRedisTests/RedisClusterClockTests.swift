import Foundation
#if canImport(Glibc)
import Glibc
#endif
import Strata
@testable import StrataRedis
import StrataTestSupport
import Testing

/// Deadlines, clocks and clears on a real 3-master Redis Cluster on loopback.
@Suite(.serialized) struct RedisClusterClockTests {
    /// `redis-cli -p <node's port> arguments…`.
    @discardableResult
    func cli(_ cluster: RedisCluster, _ node: Int, _ arguments: String...) async throws -> String {
        try await RedisCluster.cli(["-p", "\(cluster.nodes[node].port)"] + arguments)
    }

    /// The index in `cluster.nodes` of the master serving `name`'s slot, per `client`'s map.
    func owner(of name: String, _ client: RedisClient, _ cluster: RedisCluster) async throws -> Int {
        let address = try await #require(client.cluster).address(ofSlot: RedisClusterSlot.of(Array(name.utf8)))
        return try #require(cluster.addresses.firstIndex(of: address))
    }

    /// The master serving a set's key is stopped with the set in flight
    /// until past its deadline: the set carries the deadline on that
    /// master's clock (`PXAT`), so nothing is stored (with `PX` the value
    /// lived four seconds more).
    @Test func aSetAStoppedMasterRunsAfterItsDeadlineStoresNothing() async throws {
        let cluster = try await RedisCluster()
        // The stop must not make the others mark the master failed meanwhile.
        for node in 0..<3 { try await cli(cluster, node, "CONFIG", "SET", "cluster-node-timeout", "60000") }
        let level = try RedisCacheLevel<String, String>(cluster: cluster.seedURLs, prefix: "cdl:", codec: .string,
                                                         commandTimeout: .seconds(30), invalidatesLevelsAbove: false)
        try await level.set("warm", forKey: "{t}warm", ttl: .seconds(60))  // connected; the master's clock known
        let node = try await owner(of: "cdl:{t}k", level.client, cluster)
        let deadline = SystemClock().now().advanced(by: .seconds(4))
        kill(cluster.nodes[node].process.processIdentifier, SIGSTOP)
        let write = Task {
            let began = SystemClock().now()
            try await level.set("v", forKey: "{t}k", expiresAt: deadline)
            return began
        }
        #expect(await poll(timeout: .seconds(15)) { SystemClock().now() > deadline.advanced(by: .milliseconds(50)) })
        kill(cluster.nodes[node].process.processIdentifier, SIGCONT)
        #expect(try await write.value < deadline.advanced(by: .seconds(-1)), "too slow to test: the set began after its deadline")
        #expect(try await cli(cluster, node, "PTTL", "cdl:{t}k").contains("-2"), "the set stored the value past its deadline")
        await level.shutdown(); await cluster.kill()
    }

    /// A miss's `TIME` came from one master; the key's slot then moves to
    /// another before the back-fill. The back-fill is judged by the first
    /// master's clock, so it goes there only: its `MOVED` declines it (it
    /// followed the redirect and was judged against the other master's clock).
    @Test func aBackfillWhoseSlotMovedAfterTheMissIsDeclined() async throws {
        let cluster = try await RedisCluster()
        let level = try RedisCacheLevel<String, String>(cluster: cluster.seedURLs, prefix: "pin:", codec: .string,
                                                         commandTimeout: .seconds(20), invalidatesLevelsAbove: false)
        let lower = GatedLevel()
        try await lower.store.set("v", forKey: "k", ttl: .seconds(60))
        let cache = level + lower
        let read = Task { try await cache.getIfPresent("k") }  // Redis misses (TIME from the owner); the lower read is held
        #expect(await poll(timeout: .seconds(30)) { lower.reads.value == 1 })
        // Move the (empty) slot to the next master, on every node.
        let slot = RedisClusterSlot.of(Array("pin:k".utf8))
        let from = try await owner(of: "pin:k", level.client, cluster), to = (from + 1) % 3
        let target = try await cluster.nodeID(to)
        for node in [to, from, (from + 2) % 3] {
            #expect(try await cli(cluster, node, "CLUSTER", "SETSLOT", "\(slot)", "NODE", target).contains("OK"))
        }
        try await cli(cluster, to, "CLUSTER", "BUMPEPOCH")
        lower.gate.open()
        #expect(try await read.value == "v")
        await cache.waitForPendingWrites()
        let other = try RedisClient(cluster: cluster.seedURLs)
        #expect(try await other.send("EXISTS", "pin:k") == .integer(0), "the back-fill followed the slot to another master's clock")
        await other.shutdown(); await level.shutdown(); await cluster.kill()
    }

    /// Without a move, the back-fill still lands (pinned to the master that
    /// answered `TIME`, which serves the slot).
    @Test func aBackfillLandsOnTheMasterThatAnsweredTIME() async throws {
        let cluster = try await RedisCluster()
        let level = try RedisCacheLevel<String, String>(cluster: cluster.seedURLs, prefix: "pinok:", codec: .string,
                                                         invalidatesLevelsAbove: false)
        let lower = MemoryCacheLevel<String, String>(capacity: 100)
        try await lower.set("v", forKey: "k", ttl: .seconds(60))
        let cache = level + lower
        #expect(await poll {
            _ = try? await cache.get("k")
            await cache.waitForPendingWrites()
            return (try? await level.getIfPresent("k")) == "v"
        })
        let node = try await owner(of: "pinok:k", level.client, cluster)
        guard case .integer(let left)? = try? await level.client.send("PTTL", "pinok:k") else { Issue.record("no PTTL"); return }
        #expect(left > 0 && left <= 60_000, "PTTL \(left) on master \(node)")
        await level.shutdown(); await cluster.kill()
    }

    /// A master out of memory refuses the clear's tombstone script, while its
    /// `SCAN` and `UNLINK` still work: the clear emptied every master and
    /// reported success, with no tombstone in that master's slots (a
    /// back-fill begun before the clear could then bring an old value back).
    /// It now fails, naming the refusal.
    @Test func aClearWhoseTombstonesAMasterRefusesFails() async throws {
        let cluster = try await RedisCluster()
        let level = try RedisCacheLevel<String, String>(cluster: cluster.seedURLs, prefix: "ct:", codec: .string,
                                                         invalidatesLevelsAbove: false)
        for index in 0..<30 { try await level.set("v", forKey: "k\(index)") }
        try await cli(cluster, 1, "CONFIG", "SET", "maxmemory", "1")
        await #expect {
            try await level.clearPrefix()
        } throws: { error in
            "\(error)".contains("OOM") && "\(error)".contains("tombstones")
        }
        #expect(level.warnings.clearTombstonesFailed.logged == 1)
        try await cli(cluster, 1, "CONFIG", "SET", "maxmemory", "0")
        await level.shutdown(); await cluster.kill()
    }

    /// With an outage backlog, such a clear is kept and replayed until every
    /// slot has its tombstone.
    @Test func aClearWhoseTombstonesFailedIsReplayedUntilEverySlotHasOne() async throws {
        let cluster = try await RedisCluster()
        let level = try RedisCacheLevel<String, String>(cluster: cluster.seedURLs, prefix: "ctr:", codec: .string,
                                                         invalidatesLevelsAbove: false, outageBacklog: 100)
        for index in 0..<30 { try await level.set("v", forKey: "k\(index)") }
        try await cli(cluster, 1, "CONFIG", "SET", "maxmemory", "1")
        try await level.clearPrefix()
        #expect(level.writesAwaitingReplay == 1, "the clear was not kept for replay")
        try await cli(cluster, 1, "CONFIG", "SET", "maxmemory", "0")
        #expect(await poll { level.writesAwaitingReplay == 0 })
        let other = try RedisClient(cluster: cluster.seedURLs)
        for slot in stride(from: 0, to: RedisClusterSlot.count, by: 97) {
            let tombstone = level.tombstoneOfAll(slot: slot)
            #expect(try await other.send([RedisCommandName.exists, tombstone]) == .integer(1), "no clear tombstone in slot \(slot)")
        }
        await other.shutdown(); await level.shutdown(); await cluster.kill()
    }
}
