"""sweeps and their variations

Revision ID: 0002
Revises: 0001

"""
from typing import Sequence, Union

import sqlalchemy as sa
from alembic import op

from store.models import UTCDateTime

revision: str = '0002'
down_revision: Union[str, Sequence[str], None] = '0001'
branch_labels: Union[str, Sequence[str], None] = None
depends_on: Union[str, Sequence[str], None] = None


def upgrade() -> None:
    op.create_table('sweeps',
                    sa.Column('id', sa.String(length=32), nullable=False),
                    sa.Column('owner', sa.String(length=64), nullable=False),
                    sa.Column('model_id', sa.String(length=40), nullable=False),
                    sa.Column('spec', sa.JSON(), nullable=False),
                    sa.Column('columns', sa.JSON(), nullable=False),
                    sa.Column('total', sa.Integer(), nullable=False),
                    sa.Column('sent', sa.Integer(), nullable=False),
                    sa.Column('created_at', UTCDateTime(), nullable=False),
                    sa.Column('canceled_at', UTCDateTime(), nullable=True),
                    sa.ForeignKeyConstraint(['model_id'], ['models.id']),
                    sa.PrimaryKeyConstraint('id'))
    with op.batch_alter_table('sweeps', schema=None) as batch_op:
        batch_op.create_index('ix_sweeps_owner_id', ['owner', 'id'], unique=False)
    op.create_table('sweep_variations',
                    sa.Column('sweep_id', sa.String(length=32), nullable=False),
                    sa.Column('index', sa.Integer(), nullable=False),
                    sa.Column('job_id', sa.String(length=32), nullable=False),
                    sa.Column('values', sa.JSON(), nullable=False),
                    sa.Column('outputs', sa.JSON(), nullable=True),
                    sa.ForeignKeyConstraint(['job_id'], ['jobs.id']),
                    sa.ForeignKeyConstraint(['sweep_id'], ['sweeps.id']),
                    sa.PrimaryKeyConstraint('sweep_id', 'index'),
                    sa.UniqueConstraint('job_id'))


def downgrade() -> None:
    op.drop_table('sweep_variations')
    with op.batch_alter_table('sweeps', schema=None) as batch_op:
        batch_op.drop_index('ix_sweeps_owner_id')
    op.drop_table('sweeps')
