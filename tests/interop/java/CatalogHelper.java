import java.util.LinkedHashMap;
import java.util.Map;
import java.util.concurrent.Callable;

import org.apache.paimon.catalog.Catalog;
import org.apache.paimon.catalog.CatalogLock;
import org.apache.paimon.catalog.CatalogLockContext;
import org.apache.paimon.catalog.CatalogLockFactory;
import org.apache.paimon.catalog.Identifier;
import org.apache.paimon.shade.jackson2.com.fasterxml.jackson.databind.ObjectMapper;
import org.apache.paimon.table.FileStoreTable;

/**
 * Test-only catalog-level calls of Java Paimon 0.9 (databases, drop/rename, the catalog lock,
 * partitions through the catalog, repair), for the metastore catalog tests. Catalogs come from
 * PaimonTestHelper.catalog(spec): a warehouse path or a JSON object of catalog options, so the
 * same calls drive the filesystem, Hive and JDBC catalogs. Names and results travel as JSON.
 */
public final class CatalogHelper {

    private static final ObjectMapper MAPPER = new ObjectMapper();

    private CatalogHelper() {}

    private static Catalog catalog(String spec) {
        return PaimonTestHelper.catalog(spec);
    }

    public static String listDatabases(String spec) throws Exception {
        return MAPPER.writeValueAsString(catalog(spec).listDatabases());
    }

    public static String listTables(String spec, String db) throws Exception {
        return MAPPER.writeValueAsString(catalog(spec).listTables(db));
    }

    public static void createDatabase(String spec, String db, boolean ignoreIfExists) throws Exception {
        catalog(spec).createDatabase(db, ignoreIfExists);
    }

    public static void dropDatabase(String spec, String db, boolean cascade) throws Exception {
        catalog(spec).dropDatabase(db, false, cascade);
    }

    public static void dropTable(String spec, String db, String table) throws Exception {
        catalog(spec).dropTable(Identifier.create(db, table), false);
    }

    public static void renameTable(String spec, String db, String from, String toDb, String to)
            throws Exception {
        catalog(spec).renameTable(Identifier.create(db, from), Identifier.create(toDb, to), false);
    }

    /** Whether the catalog resolves the table (Hive: a Paimon table in the HMS with a schema on disk). */
    public static boolean tableExists(String spec, String db, String table) {
        return catalog(spec).tableExists(Identifier.create(db, table));
    }

    /** The table's location as the catalog resolves it. */
    public static String tableLocation(String spec, String db, String table) throws Exception {
        return ((FileStoreTable) catalog(spec).getTable(Identifier.create(db, table))).location().toString();
    }

    /** Catalog.dropPartition: Hive drops the HMS partition first, then commits the drop. */
    public static void dropPartition(String spec, String db, String table, String partitionJson)
            throws Exception {
        @SuppressWarnings("unchecked")
        Map<String, String> spec0 = MAPPER.readValue(partitionJson, LinkedHashMap.class);
        catalog(spec).dropPartition(Identifier.create(db, table), spec0);
    }

    /**
     * What Java's mark_partition_done procedure does for one partition path ("dt=x/"):
     * PartitionMarkDoneAction.createActions(table, options) (the table's
     * partition.mark-done-action), each action's markDone, then close.
     */
    public static void markPartitionDone(String spec, String db, String table, String partitionPath)
            throws Exception {
        FileStoreTable t = (FileStoreTable) catalog(spec).getTable(Identifier.create(db, table));
        java.util.List<org.apache.paimon.partition.actions.PartitionMarkDoneAction> actions =
                org.apache.paimon.partition.actions.PartitionMarkDoneAction.createActions(t, t.coreOptions());
        try {
            for (org.apache.paimon.partition.actions.PartitionMarkDoneAction a : actions) {
                a.markDone(partitionPath);
            }
        } finally {
            for (org.apache.paimon.partition.actions.PartitionMarkDoneAction a : actions) {
                a.close();
            }
        }
    }

    public static void repairTable(String spec, String db, String table) throws Exception {
        catalog(spec).repairTable(Identifier.create(db, table));
    }

    /**
     * Take the catalog's own lock (HiveCatalogLock for metastore=hive) on db.table, hold it for
     * holdMillis, release it. Returns {"waited_ms", "held_ms"}; throws when the catalog has no
     * lock (lock.enabled off) or the lock cannot be acquired in lock-acquire-timeout.
     */
    public static String holdLock(String spec, String db, String table, long holdMillis) throws Exception {
        Catalog c = catalog(spec);
        CatalogLockFactory factory =
                c.lockFactory().orElseThrow(() -> new IllegalStateException("catalog has no lock"));
        CatalogLockContext context =
                c.lockContext().orElseThrow(() -> new IllegalStateException("catalog has no lock context"));
        long start = System.currentTimeMillis();
        long[] acquired = new long[1];
        try (CatalogLock lock = factory.createLock(context)) {
            Callable<Void> hold =
                    () -> {
                        acquired[0] = System.currentTimeMillis();
                        Thread.sleep(holdMillis);
                        return null;
                    };
            lock.runWithLock(db, table, hold);
        }
        long end = System.currentTimeMillis();
        Map<String, Long> out = new LinkedHashMap<>();
        out.put("waited_ms", acquired[0] - start);
        out.put("held_ms", end - acquired[0]);
        return MAPPER.writeValueAsString(out);
    }
}
