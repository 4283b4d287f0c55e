"""results in the database: result_chunks, results.storage

Results stored before this revision are compressed .npz files (path set): they are marked
storage='npz' and stay readable as they are (store.results._Npz).

Revision ID: 0003
Revises: 0002
"""
from typing import Sequence, Union

import sqlalchemy as sa
from alembic import op

revision: str = '0003'
down_revision: Union[str, Sequence[str], None] = '0002'
branch_labels: Union[str, Sequence[str], None] = None
depends_on: Union[str, Sequence[str], None] = None


def upgrade() -> None:
    with op.batch_alter_table('results', schema=None) as batch_op:
        batch_op.add_column(sa.Column('storage', sa.String(length=8), nullable=True))
    op.execute("UPDATE results SET storage = 'npz' WHERE path IS NOT NULL")
    op.execute("UPDATE results SET storage = 'db' WHERE path IS NULL")  # no sensors: nothing to read
    op.create_table('result_chunks',
                    sa.Column('job_id', sa.String(length=32), nullable=False),
                    sa.Column('sensor', sa.Integer(), nullable=False),
                    sa.Column('seq', sa.Integer(), nullable=False),
                    sa.Column('data', sa.LargeBinary(), nullable=False),
                    sa.ForeignKeyConstraint(['job_id'], ['results.job_id'], ondelete='CASCADE'),
                    sa.PrimaryKeyConstraint('job_id', 'sensor', 'seq'))
    if op.get_bind().dialect.name == 'postgresql':
        # float64 rows do not compress: store them out of line as they are (no pglz on write and read)
        op.execute("ALTER TABLE result_chunks ALTER COLUMN data SET STORAGE EXTERNAL")


def downgrade() -> None:
    op.drop_table('result_chunks')
    with op.batch_alter_table('results', schema=None) as batch_op:
        batch_op.drop_column('storage')
