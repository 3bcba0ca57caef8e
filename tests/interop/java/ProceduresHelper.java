import java.time.Duration;
import java.time.LocalDateTime;
import java.util.Map;
import java.util.Set;
import java.util.TreeMap;

import org.apache.paimon.Snapshot;
import org.apache.paimon.catalog.Identifier;
import org.apache.paimon.consumer.ConsumerManager;
import org.apache.paimon.shade.jackson2.com.fasterxml.jackson.databind.ObjectMapper;
import org.apache.paimon.table.FileStoreTable;
import org.apache.paimon.utils.SnapshotManager;

/**
 * Test-only Java Paimon 0.9 calls for the maintenance procedures of issue 25
 * (tests/interop/test_procedures_java.py). The procedures live in paimon-flink, which the bridge
 * jar lacks; where 0.9 has one, its body is repeated here through the same core calls
 * (create_tag_from_timestamp / _watermark, reset_consumer), otherwise the core call a 2.x
 * procedure makes (rollback_to_timestamp: earlierOrEqualTimeMills + rollbackTo).
 */
public final class ProceduresHelper {

    private static final ObjectMapper MAPPER = new ObjectMapper();

    private ProceduresHelper() {}

    private static FileStoreTable table(String warehouse, String db, String table) throws Exception {
        return (FileStoreTable) PaimonTestHelper.catalog(warehouse).getTable(Identifier.create(db, table));
    }

    private static ConsumerManager consumers(FileStoreTable t) {
        return new ConsumerManager(t.fileIO(), t.location(), t.snapshotManager().branch());
    }

    /** reset_consumer without next_snapshot_id (0.9: deleteConsumer). */
    public static void deleteConsumer(String warehouse, String db, String table, String id) throws Exception {
        consumers(table(warehouse, db, table)).deleteConsumer(id);
    }

    /** ConsumerManager.consumers() as a JSON object id -> next snapshot. */
    public static String listConsumers(String warehouse, String db, String table) throws Exception {
        return MAPPER.writeValueAsString(new TreeMap<>(consumers(table(warehouse, db, table)).consumers()));
    }

    /** What a 0.9 committer does first after a commit with consumer.expiration-time set. */
    public static void expireConsumers(String warehouse, String db, String table, long expirationMillis)
            throws Exception {
        consumers(table(warehouse, db, table))
                .expire(LocalDateTime.now().minus(Duration.ofMillis(expirationMillis)));
    }

    /** rollback_to_timestamp's core calls (2.x): earlierOrEqualTimeMills, then rollbackTo. */
    public static long rollbackToTimestamp(String warehouse, String db, String table, long timestamp)
            throws Exception {
        FileStoreTable t = table(warehouse, db, table);
        Snapshot snapshot = t.snapshotManager().earlierOrEqualTimeMills(timestamp);
        if (snapshot == null) {
            throw new IllegalArgumentException("count not find snapshot earlier than " + timestamp);
        }
        t.rollbackTo(snapshot.id());
        return snapshot.id();
    }

    /** The body of 0.9's CreateTagFromTimestampProcedure; returns the snapshot id tagged. */
    public static long createTagFromTimestamp(
            String warehouse, String db, String table, String tagName, long timestamp, String timeRetained)
            throws Exception {
        FileStoreTable t = table(warehouse, db, table);
        SnapshotManager snapshotManager = t.snapshotManager();
        Snapshot snapshot = snapshotManager.laterOrEqualTimeMills(timestamp);
        Set<Snapshot> sortedTagsSnapshots = t.tagManager().tags().keySet();
        for (Snapshot tagSnapshot : sortedTagsSnapshots) {
            if (timestamp <= tagSnapshot.timeMillis()) {
                if (snapshot == null || tagSnapshot.timeMillis() < snapshot.timeMillis()) {
                    snapshot = tagSnapshot;
                }
                break;
            }
        }
        if (snapshot == null) {
            throw new IllegalArgumentException("Could not find any snapshot whose commit-time later than " + timestamp);
        }
        t.createTag(tagName, snapshot.id(), duration(timeRetained));
        return snapshot.id();
    }

    /** The body of 0.9's CreateTagFromWatermarkProcedure; returns the snapshot id tagged. */
    public static long createTagFromWatermark(
            String warehouse, String db, String table, String tagName, long watermark, String timeRetained)
            throws Exception {
        FileStoreTable t = table(warehouse, db, table);
        Snapshot snapshot = t.snapshotManager().laterOrEqualWatermark(watermark);
        for (Snapshot tagSnapshot : t.tagManager().tags().keySet()) {
            if (tagSnapshot.watermark() != null && watermark <= tagSnapshot.watermark()) {
                if (snapshot == null
                        || snapshot.watermark() == null
                        || tagSnapshot.watermark() < snapshot.watermark()) {
                    snapshot = tagSnapshot;
                }
                break;
            }
        }
        if (snapshot == null) {
            throw new IllegalArgumentException("Could not find any snapshot whose watermark later than " + watermark);
        }
        t.createTag(tagName, snapshot.id(), duration(timeRetained));
        return snapshot.id();
    }

    /** trigger_tag_automatic_creation's core call (0.9 name: newTagCreationManager().run()). */
    public static void triggerTagAutomaticCreation(String warehouse, String db, String table) throws Exception {
        table(warehouse, db, table).store().newTagCreationManager().run();
    }

    private static Duration duration(String text) {
        return text == null ? null : org.apache.paimon.utils.TimeUtils.parseDuration(text);
    }

    /** Tag name -> snapshot id, as a JSON object. */
    public static String tags(String warehouse, String db, String table) throws Exception {
        Map<String, Long> out = new TreeMap<>();
        for (Map.Entry<Snapshot, java.util.List<String>> e : table(warehouse, db, table).tagManager().tags().entrySet()) {
            for (String name : e.getValue()) {
                out.put(name, e.getKey().id());
            }
        }
        return MAPPER.writeValueAsString(out);
    }
}
